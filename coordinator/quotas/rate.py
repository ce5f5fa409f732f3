"""Kafka's sampled rate (org.apache.kafka.common.metrics.stats.Rate over a SampledStat) and the throttle time
a quota violation earns (QuotaUtils.throttleTime).

A rate keeps ``quota.window.num`` samples of ``quota.window.size.seconds`` each. A value is recorded into the
current sample (a new one is started once the current one is a window old); the rate is the sum of the
samples still younger than the whole span, divided by the span they cover — never less than ``samples - 1``
windows, so that a burst right after a quiet period is not measured over a few milliseconds. Recording first
and checking after is Kafka's order: the request that crosses the bound is counted, and its throttle time is
how long the client must stay silent for the rate to fall back to the bound:
``(rate - bound) / bound * window``.
"""
from __future__ import annotations

import math


class _Sample:
    __slots__ = ("start_ms", "value", "events")

    def __init__(self, now_ms: int) -> None:
        self.start_ms = now_ms
        self.value = 0.0
        self.events = 0

    def reset(self, now_ms: int) -> None:
        self.start_ms = now_ms
        self.value = 0.0
        self.events = 0


class SampledRate:
    """One quota sensor's Rate (per second) with its bound (None: unbounded)."""

    __slots__ = ("samples", "window_ms", "bound", "_samples", "_current", "last_record_ms")

    def __init__(self, samples: int, window_ms: int, bound: float | None = None) -> None:
        self.samples = max(1, samples)
        self.window_ms = max(1, window_ms)
        self.bound = bound
        self._samples: list[_Sample] = []
        self._current = 0
        self.last_record_ms = 0

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % self.samples
        if self._current >= len(self._samples):
            sample = _Sample(now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            sample = self._advance(now_ms)
        sample.value += value
        sample.events += 1
        self.last_record_ms = now_ms

    def _purge(self, now_ms: int) -> None:
        expire_age = self.samples * self.window_ms
        for sample in self._samples:
            if now_ms - sample.start_ms >= expire_age:
                sample.reset(now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        """Rate.windowSize: the span the samples cover, at least ``samples - 1`` full windows."""
        self._purge(now_ms)
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        oldest = min(s.start_ms for s in self._samples)
        elapsed = now_ms - oldest
        full = elapsed // self.window_ms
        minimum = self.samples - 1
        if full < minimum:
            elapsed += (minimum - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: int) -> float:
        """Units per second over the window."""
        window = self.window_size_ms(now_ms)  # purges obsolete samples first
        total = sum(s.value for s in self._samples)
        return total / (window / 1000.0) if window > 0 else 0.0

    def record_and_throttle_ms(self, value: float, now_ms: int, max_throttle_ms: int | None = None) -> int:
        """Record, then Kafka's quota check: 0 within the bound, else the throttle time in milliseconds."""
        self.record(value, now_ms)
        bound = self.bound
        if bound is None:
            return 0
        rate = self.measure(now_ms)
        if rate <= bound:
            return 0
        throttle = math.floor((rate - bound) / bound * self.window_size_ms(now_ms) + 0.5)  # Java's Math.round
        if max_throttle_ms is not None:
            throttle = min(throttle, max_throttle_ms)
        return int(throttle)
