"""Daemon start-up: exec of `python -m groupcoord serve` to its `listening on` line, on an empty data dir.

    python -m bench.startup_bench --runs 5                     # as installed: bytecode compiled
    python -m bench.startup_bench --runs 5 --bytecode none     # a source tree under PYTHONDONTWRITEBYTECODE

Prints each run and the median, as wall time and as the daemon's own CPU time up to that line (read from
/proc/<pid>/schedstat when the line arrives): on a shared machine the wall time moves with the other load,
the CPU time much less, so both are shown.

Bytecode: an installed daemon (pip install, the Docker image) runs from .pyc files that pip compiled at
install time. A development tree under PYTHONDONTWRITEBYTECODE=1 (this project's shells and CI set it)
has none for groupcoord's own ~300 modules and compiles every one at every start: 150-250 ms on this
machine, more than anything else in start-up. ``--bytecode cached`` (the default) measures the installed
case: the daemon's bytecode goes to a PYTHONPYCACHEPREFIX of the bench's own, written by one uncounted
first start (the source tree is not touched); ``--bytecode none`` measures the environment as it is. Imports are most of it: `python -X importtime -m groupcoord
serve ...` shows which (start-up imports nothing that serving does not need; the admin CLI, the pipeline,
the compression codecs, kio's schemas and the API handler modules load on first use, and so do the consumer- and
share-group records, the lazily handled group APIs' requests, the data plane's API-only services, TLS/SASL code
for a PLAINTEXT-only broker, ACL bindings and SCRAM, prometheus_client (the first scrape), hashlib, the quota and
credential admin APIs' dataclasses: tests/coordinator/ops/test_daemon_imports.py lists them).
``python -m bench.startup_instructions`` counts the instructions to the same line (callgrind), which the
machine's load does not move.
Once listening, the daemon imports the common APIs' modules in the background (coordinator/apis/warm_up.py);
``python -m bench.first_requests_bench`` measures what the first requests still pay.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .servers import _LISTENING, stop


def cpu_seconds(pid: int) -> float | None:
    """The process's time on a CPU so far (nanoseconds in /proc/<pid>/schedstat), or None off Linux."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def one_run(timeout: float = 30.0, env: dict[str, str] | None = None) -> tuple[float, float | None]:
    """(wall seconds, CPU seconds) from exec to the `listening on` line, the same command as bench/servers.py."""
    with tempfile.TemporaryDirectory(prefix="groupcoord-startup-") as data:
        cmd = [sys.executable, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
               "--fsync", "batch", "--metrics-port", "0", "--log-level", "warning", "--log-format", "json"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
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
            stop(proc)


def measure(runs: int) -> list[float]:
    """Wall milliseconds of each run (what bench/compare.py reports)."""
    return [one_run()[0] * 1000 for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bytecode", choices=("cached", "none"), default="cached",
                        help="cached: compiled once, as an installed daemon runs; none: the environment as it is")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="groupcoord-startup-pyc-") as pyc:
        env = None
        if ns.bytecode == "cached":
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = pyc
            one_run(env=env)  # uncounted: writes the bytecode
        runs = [one_run(env=env) for _ in range(max(1, min(ns.runs, 50)))]
    print(f"bytecode: {ns.bytecode}; load average {os.getloadavg()[0]:.2f}")
    walls = [w * 1000 for w, _ in runs]
    cpus = [c * 1000 for _, c in runs if c is not None]
    print("start-up, exec to 'listening on' (ms wall): " + ", ".join(f"{t:.0f}" for t in walls))
    if cpus:
        print("the daemon's CPU time to that line (ms): " + ", ".join(f"{t:.0f}" for t in cpus))
    print(f"median {statistics.median(walls):.0f} ms wall"
          + (f", {statistics.median(cpus):.0f} ms CPU" if cpus else "") + f" over {len(runs)} runs")


if __name__ == "__main__":
    main()
