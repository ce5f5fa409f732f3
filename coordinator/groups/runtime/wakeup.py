"""A shard writer's wake-up: ``asyncio.Event``'s set / clear / wait for its one waiter, on a loop it is given.

Why not ``asyncio.Event``: its ``wait`` asks for the running loop each time (its loop-binding check), a
``getpid()`` system call on CPython 3.11 (see storage/kept_loop.py); the writer waits once or twice per append,
an append per read of eight commits under load. The runtime keeps its loop and hands it to ``wait``.
"""

from __future__ import annotations

import asyncio

__all__ = ["Wakeup"]


class Wakeup:
    """Set, cleared and waited for as an ``asyncio.Event``, by one waiter at a time (the shard's writer)."""

    __slots__ = ("_set", "_waiter")

    def __init__(self) -> None:
        self._set = False
        self._waiter: asyncio.Future[None] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if not self._set:
            self._set = True
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    async def wait(self, loop: asyncio.AbstractEventLoop) -> None:
        """Returns once set (at once if it is); ``loop``: the running one."""
        if self._set:
            return
        if self._waiter is not None:
            raise RuntimeError("a Wakeup has one waiter at a time")
        waiter = self._waiter = loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None
