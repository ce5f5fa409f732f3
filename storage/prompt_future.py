"""An asyncio future whose prompt waiter is resumed in the callback that resolved it, not a loop turn later.

Why: asyncio runs a future's done callbacks with ``call_soon``, so whoever waits on an append's future resumes on
the loop's next turn. A broker under load has long turns (tens of milliseconds of other connections' requests in
franz-go's TestGroupETL), and every Produce acknowledgement paid one more of them between the write round that made
its append durable and the handler that answers it. A round's end (group_commit.py, write_rounds.py) is a plain
loop callback, not inside any Task, so the handler waiting there can be resumed in it: ``resolve_promptly`` marks
the waiter due and ``run_due`` runs it once the round's bookkeeping is done (never in the middle of it: the waiter
may append to the very logs the round is handing their outcomes to).

Only a caller that drives a coroutine without a Task (coordinator/server/driven.py) registers a prompt waiter
(``add_prompt_callback``): a Task must not be stepped from inside another one, and asyncio's own waiters use
``add_done_callback`` as with any future. A prompt future resolved any other way (``set_result``,
``set_exception``, ``cancel``: a failed write, a cancelled handler) wakes its prompt waiter a loop turn later, as a
done callback would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["PromptFuture", "run_due"]

_due: list[tuple[Callable[[Any], None], "PromptFuture"]] = []
"""Prompt waiters of futures resolved promptly, not yet run (module-wide: every round of every data directory
runs on the one event loop)."""


class PromptFuture(asyncio.Future):
    """``asyncio.Future`` plus one prompt waiter (see the module docstring)."""

    _prompt: Callable[[Any], None] | None = None

    def add_prompt_callback(self, fn: Callable[["PromptFuture"], None]) -> None:
        """``fn(self)`` once the future is done: in the callback that resolved it by ``resolve_promptly``
        (``run_due``), else a loop turn later. One prompt waiter per future."""
        if self.done():
            self.get_loop().call_soon(fn, self)
        else:
            self._prompt = fn

    def resolve_promptly(self, result: Any) -> None:
        """``set_result``, with the prompt waiter (if any) left for ``run_due`` rather than the next loop turn. The
        caller runs ``run_due`` when its own bookkeeping is done; in case it does not, it runs at the next turn."""
        super().set_result(result)
        fn = self._prompt
        if fn is not None:
            self._prompt = None
            if not _due:
                self.get_loop().call_soon(run_due)
            _due.append((fn, self))

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        self._wake_later()

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        self._wake_later()

    def cancel(self, msg: Any = None) -> bool:
        if not super().cancel(msg):
            return False
        self._wake_later()
        return True

    def _wake_later(self) -> None:
        fn = self._prompt
        if fn is not None:
            self._prompt = None
            self.get_loop().call_soon(fn, self)


def run_due() -> None:
    """Run the prompt waiters of the futures resolved promptly so far, in the order they were resolved (and those
    resolved while they run). A waiter that raises is reported to the loop's exception handler; the rest still
    run."""
    while _due:
        batch = _due[:]
        del _due[:]
        for fn, future in batch:
            if future.get_loop().is_closed():
                continue  # (a loop a test closed with a round's waiter in it: nothing left to resume)
            try:
                fn(future)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - one waiter's failure must not strand the others
                future.get_loop().call_exception_handler({
                    "message": "a prompt future's waiter failed", "exception": exc, "future": future})
