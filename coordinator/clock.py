"""The broker's one clock: wall time, monotonic time and timers, injected everywhere so tests never sleep.

Two kinds of time, named for what they are, because they answer different questions:

- ``wall_ms()`` is Kafka's ``Time.milliseconds()``: commit and expiry timestamps, group state times,
  LogAppendTime. It is persisted and compared across restarts, so it must be the wall clock.
- ``monotonic_ms()`` is for deadlines inside one process (a long-poll Fetch, a fetch session's idle
  time): it never jumps when the wall clock is set.

``ManualClock`` moves both together, only when a test says so, and fires the timers that fall due.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def wall_ms(self) -> int: ...

    def monotonic_ms(self) -> int: ...

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle: ...


class SystemClock:
    """Real time; timers run on the running asyncio loop."""

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(0, delay_ms) / 1000.0, callback)


@dataclass(order=True)
class _ManualTimer:
    """A ManualClock timer, ordered by due time then by when it was set (ties fire in that order)."""
    due_ms: int
    seq: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that only moves when told to; ``advance`` fires the timers that fall due, in order.
    Wall and monotonic time are the same number here: a test has no wall clock to be set."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms
        self._timers: list[_ManualTimer] = []
        self._seq = itertools.count()

    def wall_ms(self) -> int:
        return self._now

    def monotonic_ms(self) -> int:
        return self._now

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle:
        timer = _ManualTimer(self._now + max(0, delay_ms), next(self._seq), callback)
        heapq.heappush(self._timers, timer)
        return timer

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError("time does not run backwards")
        target = self._now + ms
        while self._timers and self._timers[0].due_ms <= target:
            timer = heapq.heappop(self._timers)
            self._now = max(self._now, timer.due_ms)
            if not timer.cancelled:
                timer.callback()
        self._now = target
        return self._now

    @property
    def pending_timers(self) -> int:
        return sum(1 for t in self._timers if not t.cancelled)
