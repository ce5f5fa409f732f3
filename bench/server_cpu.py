"""µs of the daemon's CPU per request under the socket load: the figure that a shared machine does not blur.

    python -m bench.server_cpu --request heartbeat
    python -m bench.server_cpu --request offset_commit --fsync batch --runs 3

The daemon (``python -m groupcoord serve``, as bench.compare starts it) is pinned to core 0 and the load
generator (bench.loadgen, 64 connections x 8 in flight, 2 processes) to core 1. The daemon's user + system
CPU time, all its threads (the log's fsync thread included), is read from /proc/PID/stat before and after
the measured load and divided by the requests answered. Requests per second depend on what else the
machine runs; CPU per request much less, so that is the figure to compare builds by (with ``uptime``).
"""

from __future__ import annotations

import argparse
import os
import time

from .loadgen import add_load_arguments, run_load
from .servers import bare, groupcoord


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of ``pid`` (fields 14 and 15 of /proc/PID/stat), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds per thread name of ``pid`` (threads of one name summed)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        name = "main" if tid == str(pid) else name.rstrip("0123456789_")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def switches(pid: int) -> int:
    """Context switches of the daemon's main thread (voluntary and not): a GIL hand-off to a worker thread
    costs one or two."""
    total = 0
    with open(f"/proc/{pid}/task/{pid}/status") as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def one_run(request: str, fsync: str, seconds: float, connections: int, pipeline: int,
            bare_server: bool = False) -> tuple[float, float]:
    """(requests per second, µs of server CPU per request) of one fresh daemon (or of the bare server)."""
    server = bare([0]) if bare_server else groupcoord([0], fsync=fsync, group_initial_rebalance_delay_ms=0)
    with server as started:
        bootstrap, pid = started[0], started.pid
        run_load(bootstrap, request, connections, pipeline, 2.0, processes=2, client_cores=[1], tag="warm")
        before = cpu_seconds(pid)
        threads_before = thread_cpu(pid)
        switched = switches(pid)
        result = run_load(bootstrap, request, connections, pipeline, seconds, processes=2, client_cores=[1],
                          tag="measured")
        used = cpu_seconds(pid) - before
        threads_after = thread_cpu(pid)
        n = max(result.requests, 1)
        print("   by thread, µs per request: " + ", ".join(
            f"{name} {(spent - threads_before.get(name, 0.0)) / n * 1e6:.2f}"
            for name, spent in sorted(threads_after.items())
            if spent - threads_before.get(name, 0.0) > 0)
            + f"; main thread context switches per request {(switches(pid) - switched) / n:.2f}", flush=True)
        return result.rate, used / n * 1e6

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_load_arguments(parser)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bare", action="store_true", help="the bare uvloop server instead (ApiVersions): the floor")
    ns = parser.parse_args()
    samples = []
    for _ in range(max(1, ns.runs)):
        rate, us = one_run("api_versions" if ns.bare else ns.request, ns.fsync, min(ns.seconds, 60.0), ns.connections,
                           ns.pipeline, ns.bare)
        load = os.getloadavg()[0]
        samples.append((us, rate))
        print(f"{'bare api_versions' if ns.bare else ns.request} fsync={ns.fsync}: {rate:,.0f} req/s, {us:.2f} µs server CPU per request "
              f"(load {load:.2f})", flush=True)
    samples.sort()
    us, rate = samples[len(samples) // 2]
    rates = sorted(r for _, r in samples)
    print(f"median of {len(samples)}: {us:.2f} µs CPU per request (min {samples[0][0]:.2f}); "
          f"{rates[len(rates) // 2]:,.0f} req/s median ({time.strftime('%H:%M:%S', time.gmtime())} UTC)")


if __name__ == "__main__":
    main()
