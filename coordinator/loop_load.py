"""How busy the event loop's thread has kept its core lately: the CPU it used over the wall time that passed.

Why: a broker whose loop is saturated answers every request later anyway, and what it spends per request decides
its throughput; a loop with time to spare should answer at once. The fetch path asks ``busy()`` to decide whether
a Fetch woken by new data gathers a little longer before it reads (``FetchService``; ``fetch.busy.linger.ms``).

The share is measured lazily, from the readings taken by the calls themselves (``time.thread_time`` of the
calling thread, which is the loop's: only code running on the loop asks), at most once per window: no timer, no
thread, nothing running while nobody asks. A share over a long quiet gap is low, so the first question after
idling answers "not busy" and the next window answers for the load that followed.
"""
from __future__ import annotations

import time
from typing import Callable, Final

BUSY_SHARE: Final = 0.6
"""The loop counts as busy from this share of one core over its last window. Measured with franz-go's
TestGroupETL (500,000 records, docs/BENCHMARKS.md): at 0.9 a woken fetch seldom lingered, as lingering itself
brings the loop under 0.9; 0.6 and 0.4 gave the same wall time and request counts."""

WINDOW_S: Final = 0.1
"""The shortest wall time one share is measured over."""


class LoopLoad:
    """``share()``: the calling thread's CPU seconds per wall second over its last window of at least
    ``window_s``; ``busy()``: whether that reaches ``threshold``. ``cpu`` and ``now`` are injectable for tests."""

    def __init__(self, threshold: float = BUSY_SHARE, window_s: float = WINDOW_S,
                 cpu: Callable[[], float] = time.thread_time, now: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self._window_s = window_s
        self._cpu = cpu
        self._now = now
        self._since = now()
        self._cpu_since = cpu()
        self._share = 0.0

    def share(self) -> float:
        now = self._now()
        elapsed = now - self._since
        if elapsed >= self._window_s:
            cpu = self._cpu()
            self._share = (cpu - self._cpu_since) / elapsed
            self._since, self._cpu_since = now, cpu
        return self._share

    def busy(self) -> bool:
        return self.share() >= self.threshold
