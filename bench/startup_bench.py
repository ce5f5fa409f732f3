"""Daemon start-up: exec of `python -m groupcoord serve` to its `listening on` line, on an empty data dir.

    python -m bench.startup_bench --runs 5

Prints each run and the median, as wall time and as the daemon's own CPU time up to that line (read from
/proc/<pid>/schedstat when the line arrives): on a shared machine the wall time moves with the other load,
the CPU time much less, so both are shown. Imports are most of it: `python -X importtime -m groupcoord
serve ...` shows which (start-up imports nothing that serving does not need; the admin CLI, the pipeline,
the compression codecs, kio's schemas and the API handler modules load on first use).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .servers import _LISTENING


def cpu_seconds(pid: int) -> float | None:
    """The process's time on a CPU so far (nanoseconds in /proc/<pid>/schedstat), or None off Linux."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def one_run(timeout: float = 30.0) -> tuple[float, float | None]:
    """(wall seconds, CPU seconds) from exec to the `listening on` line, the same command as bench/servers.py."""
    with tempfile.TemporaryDirectory(prefix="groupcoord-startup-") as data:
        cmd = [sys.executable, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
               "--fsync", "batch", "--metrics-port", "0", "--log-level", "warning", "--log-format", "json"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert proc.stdout is not None
            deadline = t0 + timeout
            for line in proc.stdout:
                if _LISTENING.search(line):
                    wall = time.perf_counter() - t0
                    return wall, cpu_seconds(proc.pid)
                if time.perf_counter() > deadline:
                    break
            raise RuntimeError(f"{cmd[:4]} did not print 'listening on' within {timeout}s")
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def measure(runs: int) -> list[float]:
    """Wall milliseconds of each run (what bench/compare.py reports)."""
    return [one_run()[0] * 1000 for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()
    runs = [one_run() for _ in range(max(1, min(ns.runs, 50)))]
    walls = [w * 1000 for w, _ in runs]
    cpus = [c * 1000 for _, c in runs if c is not None]
    print("start-up, exec to 'listening on' (ms wall): " + ", ".join(f"{t:.0f}" for t in walls))
    if cpus:
        print("the daemon's CPU time to that line (ms): " + ", ".join(f"{t:.0f}" for t in cpus))
    print(f"median {statistics.median(walls):.0f} ms wall"
          + (f", {statistics.median(cpus):.0f} ms CPU" if cpus else "") + f" over {len(runs)} runs")


if __name__ == "__main__":
    main()
