"""Byte-rate limiter for background I/O (Kafka's log.cleaner.io.max.bytes.per.second).

Runs on executor threads, so it sleeps with ``time.sleep``: the cleaner must not starve
appends and fetches of disk bandwidth, but it must never block the event loop either.
"""

from __future__ import annotations

import math
import threading
import time


class Throttler:
    def __init__(self, bytes_per_second: float = math.inf, *, clock=time.monotonic, sleep=time.sleep) -> None:
        self.bytes_per_second = bytes_per_second
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._window_start = clock()
        self._window_bytes = 0

    def throttle(self, nbytes: int) -> float:
        """Account ``nbytes`` and sleep long enough to stay under the rate; returns the sleep."""
        if math.isinf(self.bytes_per_second):
            return 0.0
        with self._lock:
            self._window_bytes += nbytes
            elapsed = self._clock() - self._window_start
            wanted = self._window_bytes / self.bytes_per_second
            delay = wanted - elapsed
            if elapsed > 1.0 and delay <= 0:
                self._window_start = self._clock()
                self._window_bytes = 0
        if delay > 0:
            self._sleep(delay)
            return delay
        return 0.0
