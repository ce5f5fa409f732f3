"""bench.cpu_sampler: how busy a process kept its core while a bench ran (TestGroupETL's client and broker)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.cpu_sampler import CpuSampler, CpuUse


def test_an_interval_counts_as_saturated_only_at_nine_tenths_of_a_core():
    readings = iter([10.0, 10.5, 10.96, 11.40, 11.45])  # the first reading, then intervals at 100, 92, 88 and 10 %
    sampler = CpuSampler(read=lambda pid: next(readings))
    sampler.track({"broker": 1})
    for _ in range(4):
        sampler.sample(0.5)
    assert sampler.stop() == {"broker": CpuUse(cpu_s=pytest.approx(1.45), saturated_s=pytest.approx(1.0))}


def test_a_process_gone_keeps_its_last_sample():
    readings = iter([0.0, 2.0])

    def read(pid: int) -> float:
        for reading in readings:
            return reading
        raise FileNotFoundError(f"/proc/{pid}/stat")

    sampler = CpuSampler(read=read)
    sampler.track({"client": 1})
    sampler.sample(1.0)  # 2 s of CPU in 1 s (two threads): saturated
    sampler.sample(1.0)  # gone
    assert sampler.stop() == {"client": CpuUse(cpu_s=2.0, saturated_s=1.0)}


def test_an_exited_child_not_yet_reaped_is_read_to_its_last_tick():
    """What bench.franz_etl relies on: sampled once the test process has exited and before it is reaped, the CPU
    is all of it, the same as the kernel's account at the reaping (one clock tick apart at most)."""
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass\n"
    child = subprocess.Popen([sys.executable, "-c", busy])
    sampler = CpuSampler(interval=0.1)
    sampler.start({"busy": child.pid})
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, left unreaped
    use = sampler.stop()["busy"]
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0  # (reaped here, not by Popen)
    assert use.cpu_s == pytest.approx(usage.ru_utime + usage.ru_stime, abs=2 / os.sysconf("SC_CLK_TCK"))
    assert use.cpu_s >= 0.35


def test_a_sleeping_process_is_never_saturated():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.8)"])
    sampler = CpuSampler(interval=0.2)  # (the interpreter's start-up, ~20 ms of CPU, is well under 90 % of one)
    sampler.start({"idle": child.pid})
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    use = sampler.stop()["idle"]
    child.wait()
    assert use.saturated_s == 0.0
    assert use.cpu_s < 0.3  # (the interpreter's start-up)


def test_the_trace_has_each_intervals_end_and_share_of_a_core():
    readings = iter([0.0, 5.0, 0.45, 5.5, 0.5, 6.0])  # broker, client, then each interval's pair
    sampler = CpuSampler(read=lambda pid: next(readings))
    sampler.track({"broker": 1, "client": 2})
    sampler.sample(0.5)
    sampler.sample(0.5)
    assert sampler.trace == [(0.5, {"broker": pytest.approx(0.9), "client": pytest.approx(1.0)}),
                             (1.0, {"broker": pytest.approx(0.1), "client": pytest.approx(1.0)})]
