"""Start a coroutine now, in the caller's turn of the loop, and give it a Task only if it has to wait.

A request that fans out into many small coroutines (Produce: one per partition) used to give each a Task up front,
so that they start in request order and carry on independently: a Task costs its creation, a loop callback for
its first step, one more per wake-up and its removal from the set of all tasks, and most of these coroutines
never wait before their end, or wait only for what the caller awaits anyway. ``start_eagerly`` runs the
coroutine at once up to its first suspension (the order of starts is the order of calls, as with tasks created
in a row); one that finishes gives its result without a Task; one that suspends is handed to a Task, which
carries it on from exactly where it stopped (waiting for the same future), as if it had been a Task from the start.

What differs from ``asyncio.ensure_future``: the coroutine's first step runs before the caller's next line rather
than on the loop's next turn, within the caller's task (``asyncio.current_task()`` is the caller's there), and an
exception it raises before suspending is kept in a finished future (the caller sees it where it would have
awaited the task), never raised from the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any


class Started:
    """A coroutine started by ``start_eagerly``: ``finished`` with its ``result``, or ``task`` (a future) to await."""

    __slots__ = ("finished", "result", "task")

    def __init__(self, finished: bool, result: Any, task: asyncio.Future | None) -> None:
        self.finished = finished
        self.result = result
        self.task = task


def start_eagerly(coro: Coroutine[Any, Any, Any]) -> Started:
    """Run ``coro`` up to its first suspension now (see the module's docstring)."""
    try:
        yielded = coro.send(None)
    except StopIteration as done:
        return Started(True, done.value, None)
    except BaseException as exc:  # (noqa: the caller meets it when it awaits, as with a task)
        failed = asyncio.get_running_loop().create_future()
        failed.set_exception(exc)
        return Started(False, None, failed)
    return Started(False, None, asyncio.ensure_future(_carry_on(coro, yielded)))


async def _carry_on(coro: Coroutine[Any, Any, Any], yielded: Any) -> Any:
    return await _Resumed(coro, yielded)


class _Resumed:
    """Awaiting this drives ``coro`` from the suspension that yielded ``yielded``: what ``await coro`` would do
    had the first ``send`` been the awaiting task's (values and exceptions the task sends in are passed on,
    closing closes the coroutine)."""

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, Any], yielded: Any) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, yielded = self._coro, self._yielded
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # thrown in by the task (a cancellation): the coroutine's to handle
                try:
                    yielded = coro.throw(exc)
                except StopIteration as done:
                    return done.value
                continue
            try:
                yielded = coro.send(sent)
            except StopIteration as done:
                return done.value
