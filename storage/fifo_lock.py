"""A first-come-first-served lock whose uncontended acquire is a plain method call, not a coroutine.

Why: the Produce path takes two locks per partition append (the producer table's and the log's append lock), and
nearly always finds them free. ``asyncio.Lock`` is entered through ``__aenter__``, a coroutine awaiting another
(``acquire``), so each free acquire still builds and runs two coroutine frames. ``FifoLock.try_acquire`` takes a
free lock with one attribute check, and ``free`` lets a caller that never waits (``PartitionLog.append_now``) see
whether anyone holds or waits for it.

The rules are asyncio.Lock's: waiters are served in the order they came, a free lock with waiters queued is not
taken by a newcomer (``try_acquire`` refuses then), and release hands the lock straight to the first waiter, so no
newcomer can slip in between. A waiter cancelled after it was handed the lock passes it on.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType

__all__ = ["FifoLock"]


class FifoLock:
    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[asyncio.Future[None]] | None = None

    def locked(self) -> bool:
        return self._held

    def free(self) -> bool:
        """Neither held nor waited for: an acquire now would take it at once."""
        return not self._held and not self._waiters

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False (and nothing done) when it is held or waited for."""
        if self._held or self._waiters:
            return False
        self._held = True
        return True

    async def acquire(self) -> bool:
        if self.try_acquire():
            return True
        if self._waiters is None:
            self._waiters = deque()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the lock, then cancelled before it ran: pass it on
            elif waiter in self._waiters:  # (release may have dropped it already)
                self._waiters.remove(waiter)
            raise
        return True  # release() handed it over: ``_held`` stayed True

    def release(self) -> None:
        if not self._held:
            raise RuntimeError("FifoLock is not acquired")
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # handed over: still held, now by that waiter
                return
        self._held = False

    async def __aenter__(self) -> None:
        if not self.try_acquire():
            await self.acquire()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.release()
