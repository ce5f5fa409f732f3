"""A request handler's coroutine driven by the connection itself, started at once, with no Task.

A handler that is a coroutine (Produce, Fetch, most APIs) used to be given a Task by ``asyncio.ensure_future``:
its creation (in Python 3.11 also an entry in the loop's weak set of all tasks), a loop callback for its first
step, and once it ended one more callback for the done callback that hands its answer to the connection.
``Driven`` runs the coroutine's first step in the frame loop that read the request (as the Task's first step
would, one loop turn later), and when the coroutine waits on a future, resumes it from that future's done
callback: one callback per wake-up, as a Task's, and the answer given in the same callback that ended it.

What a Task does and this does the same way: the coroutine is resumed with ``send(None)`` once the future it
yielded is done (the ``await`` reads the future's result itself); a bare ``yield`` (``asyncio.sleep(0)``) resumes
it on the loop's next turn; ``cancel()`` cancels the future it waits on (the coroutine then meets
``CancelledError`` where it awaits), or, when that future is already done, throws ``CancelledError`` in at the
next step. What differs: ``asyncio.current_task()`` is None inside the handler (no handler asks for it, nor uses
``asyncio.timeout`` or a TaskGroup, which need one), and the first step runs before the frames that follow in the
same read are decoded (their handlers still start in request order).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from groupcoord.storage.prompt_future import PromptFuture


class Driven:
    """``coro`` driven to its end; ``finish(self, result, exc)`` called once with its return value (``exc``
    None) or what it raised (a ``CancelledError`` when cancelled). Started by ``step()``."""

    __slots__ = ("_coro", "_finish", "_waiting", "_must_cancel", "_loop", "done", "_waiters")

    def __init__(self, coro: Coroutine[Any, Any, Any], finish: Callable[["Driven", Any, BaseException | None], None],
                 loop: asyncio.AbstractEventLoop) -> None:
        self._coro = coro
        self._finish = finish
        self._loop = loop
        self._waiting: asyncio.Future[Any] | None = None
        self._must_cancel = False
        self.done = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def step(self, _resolved: Any = None) -> None:
        """Run the coroutine up to its next suspension (or its end). Also the done callback of the future it
        waits on (``_resolved``, unused: the coroutine reads it where it awaits)."""
        self._waiting = None
        coro = self._coro
        try:
            if self._must_cancel:
                self._must_cancel = False
                yielded = coro.throw(asyncio.CancelledError())
            else:
                yielded = coro.send(None)
        except StopIteration as stop:
            self._end(stop.value, None)
            return
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a handler's failure (or its cancellation): the connection answers it
            self._end(None, exc)
            return
        if getattr(yielded, "_asyncio_future_blocking", None):  # an awaited future (Future.__await__'s yield)
            yielded._asyncio_future_blocking = False
            self._waiting = yielded
            if type(yielded) is PromptFuture:  # (an append's: resumed in the write round's callback, no turn later)
                yielded.add_prompt_callback(self.step)
            else:
                yielded.add_done_callback(self.step)
        elif yielded is None:  # a bare yield (asyncio.sleep(0)): the next turn, as a Task
            self._loop.call_soon(self.step)
        else:  # as a Task: a coroutine must not yield anything else
            self._must_cancel = False
            self._coro_throw(RuntimeError(f"a request handler yielded {yielded!r}, not a future"))

    def _coro_throw(self, exc: BaseException) -> None:
        try:
            self._coro.throw(exc)
        except StopIteration as stop:
            self._end(stop.value, None)
            return
        except BaseException as raised:
            self._end(None, raised)
            return
        self._coro.close()
        self._end(None, RuntimeError("a request handler went on after yielding a non-future"))

    def _end(self, result: Any, exc: BaseException | None) -> None:
        self.done = True
        self._finish(self, result, exc)
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def cancel(self) -> None:
        """As ``Task.cancel``: the awaited future is cancelled (the coroutine wakes with ``CancelledError``),
        or the next step throws it in."""
        if self.done:
            return
        waiting = self._waiting
        if waiting is not None and waiting.cancel():
            return
        self._must_cancel = True

    def finished(self) -> asyncio.Future[None]:
        """A future done when the coroutine has ended (graceful shutdown waits on it)."""
        waiter: asyncio.Future[None] = self._loop.create_future()
        if self.done:
            waiter.set_result(None)
        else:
            if self._waiters is None:
                self._waiters = []
            self._waiters.append(waiter)
        return waiter
