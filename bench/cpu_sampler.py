"""How busy each process of a run kept its core, sampled while the run goes on.

Why: a workload of many small requests between one broker and one client process, each pinned to a core of its own
(franz-go's TestGroupETL), is bounded in some phases by the broker's core and in others by the client's. Total CPU
seconds alone do not say which: the seconds during which each core was saturated do. The figures come from
/proc/PID/stat (utime + stime of every thread), read every ``interval`` seconds on a thread of this process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .server_cpu import cpu_seconds

SATURATED: float = 0.9
"""An interval counts as saturated when the process used at least this share of one core in it."""
BUSY: str = f"{SATURATED:.0%}".replace("%", " %")
"""The same threshold as figures' labels print it ("90 %")."""


@dataclass(frozen=True)
class CpuUse:
    cpu_s: float        # CPU seconds used between start and stop (the last sample a process was readable)
    saturated_s: float  # seconds of the intervals in which it used at least SATURATED of one core


@dataclass
class _Tracked:
    """One process under the sampler: its first and latest readings (their difference is its CPU seconds) and the
    saturated seconds so far."""
    pid: int
    first: float
    last: float
    saturated_s: float = 0.0


class CpuSampler:
    """Samples the CPU of named processes every ``interval`` seconds from ``start`` to ``stop``. A process that
    exits meanwhile keeps the figures of its last readable sample (a child not yet reaped is still readable).
    ``read``: a process's CPU seconds so far (a test gives its own). ``trace``: each interval's end (seconds from
    the first reading) and the share of one core each process used in it, to see the phases of a run."""

    def __init__(self, interval: float = 0.5, read: Callable[[int], float] = cpu_seconds) -> None:
        self.interval = interval
        self._read = read
        self._tracked: dict[str, _Tracked] = {}
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._elapsed = 0.0
        self.trace: list[tuple[float, dict[str, float]]] = []

    def start(self, pids: dict[str, int]) -> None:
        """``track`` these, then ``sample`` them every interval on a thread until ``stop``."""
        self.track(pids)
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)
        self._thread.start()

    def track(self, pids: dict[str, int]) -> None:
        """Each process's first reading: what it used before is not counted."""
        for name, pid in pids.items():
            reading = self._read(pid)
            self._tracked[name] = _Tracked(pid, reading, reading)

    def stop(self) -> dict[str, CpuUse]:
        """The figures per name, with a last sample taken now (by the thread, when one runs)."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return {name: CpuUse(t.last - t.first, t.saturated_s) for name, t in self._tracked.items()}

    def sample(self, elapsed: float) -> None:
        """One reading of each process, ``elapsed`` seconds after the one before."""
        self._elapsed += elapsed
        shares: dict[str, float] = {}
        for name, tracked in self._tracked.items():
            try:
                reading = self._read(tracked.pid)
            except (OSError, IndexError, ValueError):  # gone (reaped): its last sample stands
                continue
            spent, tracked.last = reading - tracked.last, reading
            if elapsed > 0:
                shares[name] = spent / elapsed
                if spent >= SATURATED * elapsed:
                    tracked.saturated_s += elapsed
        self.trace.append((self._elapsed, shares))

    def _run(self) -> None:
        then = time.monotonic()
        while True:
            stopping = self._stopped.wait(self.interval)
            now = time.monotonic()
            self.sample(now - then)
            then = now
            if stopping:
                return
