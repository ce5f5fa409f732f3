"""The loop's load: the CPU its thread used over the wall time passed, measured at most once per window, from the
readings of the calls themselves."""
from __future__ import annotations

import time

from groupcoord.coordinator.loop_load import LoopLoad


class Readings:
    """A wall clock and a thread CPU clock the test moves (in binary fractions, so the shares are exact)."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def run(self, wall_s: float, cpu_s: float) -> None:
        self.wall += wall_s
        self.cpu += cpu_s


def load_of(readings: Readings, threshold: float = 0.5) -> LoopLoad:
    return LoopLoad(threshold, 0.125, cpu=lambda: readings.cpu, now=lambda: readings.wall)


def test_the_share_is_the_cpu_used_over_the_wall_time_of_the_window():
    readings = Readings()
    load = load_of(readings)
    readings.run(0.25, 0.1875)
    assert load.share() == 0.75
    assert load.busy()
    readings.run(0.125, 0.046875)
    assert load.share() == 0.375
    assert not load.busy()


def test_the_share_is_measured_again_only_once_a_window_has_passed():
    readings = Readings()
    load = load_of(readings)
    readings.run(0.125, 0.125)
    assert load.share() == 1.0
    readings.run(0.0625, 0.0)          # half a window of idling: the last window's figure stands
    assert load.share() == 1.0
    readings.run(0.0625, 0.0)          # the window is whole: 0.125 s of which none on the CPU
    assert load.share() == 0.0


def test_busy_from_the_threshold_not_below():
    readings = Readings()
    load = load_of(readings)
    readings.run(0.125, 0.0546875)     # 0.4375 of the core
    assert not load.busy()
    readings.run(0.125, 0.0625)        # 0.5
    assert load.busy()


def test_a_long_quiet_gap_reads_as_idle_and_the_next_window_as_the_load_after_it():
    readings = Readings()
    load = load_of(readings)
    readings.run(8.0, 0.25)            # eight seconds nearly idle, then a first question
    assert not load.busy()
    readings.run(0.125, 0.125)         # the burst that followed
    assert load.busy()


def test_a_new_load_is_not_busy_before_its_first_window():
    readings = Readings()
    load = load_of(readings)
    readings.run(0.0625, 0.0625)
    assert not load.busy()


def test_by_default_it_reads_the_calling_threads_cpu():
    """The calling thread spinning reads as busy, sleeping as idle. (The spin is of the thread's own CPU time, and
    the threshold low, so that a machine busy with other work, which stretches the wall time, still counts it.)"""
    load = LoopLoad(0.25, 0.05)
    start = time.thread_time()
    while time.thread_time() < start + 0.08:
        pass
    assert load.busy()
    time.sleep(0.08)
    assert not load.busy()
