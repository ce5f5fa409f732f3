"""Time as the coordinator sees it: one injected source, so the core never reads the system clock.

Kafka stamps commits, expiries and state changes with wall-clock milliseconds
(they are persisted and compared after restarts), so the production clock is the
wall clock; tests drive a ``ManualClock`` and are instant and deterministic.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int: ...


class SystemClock:
    """Wall-clock milliseconds, as Kafka's ``Time.milliseconds()``."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that only moves when a test says so."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError("time does not run backwards")
        self._now += ms
        return self._now
