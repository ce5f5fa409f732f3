"""The cleaner's I/O throttle keeps background reads under log.cleaner.io.max.bytes.per.second."""

import math

from groupcoord.storage.throttle import Throttler


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_reading_faster_than_the_limit_sleeps_off_the_excess():
    clock = FakeClock()
    throttler = Throttler(1000.0, clock=clock, sleep=clock.sleep)
    for _ in range(10):
        throttler.throttle(500)
    assert clock.now == 5.0, "5000 bytes at 1000 B/s take five seconds"


def test_reading_slower_than_the_limit_never_sleeps():
    clock = FakeClock()
    throttler = Throttler(1000.0, clock=clock, sleep=clock.sleep)
    for _ in range(5):
        clock.now += 1.0
        assert throttler.throttle(100) == 0.0
    assert clock.slept == []


def test_unlimited_is_the_default():
    clock = FakeClock()
    throttler = Throttler(math.inf, clock=clock, sleep=clock.sleep)
    assert throttler.throttle(10**9) == 0.0 and clock.slept == []
