"""The wire figures of the closing notes, measured in one run on this machine:

- the bare uvloop ceiling (fixed ApiVersions answer) with 1 and 64 connections,
- groupcoord's ApiVersions and Metadata with 1 and 64 connections, as ratios of the ceiling,
- optionally Heartbeat, OffsetCommit and FindCoordinator (`--requests`),
- start-up time of the daemon (spawn to 'listening on', median of several starts) and of the
  embedded broker (Broker.start()).

Server pinned to core 0, clients to the other cores (on a 2-core machine: core 1).

    python -m bench.wire_bench --seconds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from .loadgen import LoadResult, run_load
from .servers import bare, groupcoord


def _cores() -> tuple[list[int] | None, list[int] | None]:
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return None, None
    return [cores[0]], cores[1:]


def embedded_startup_seconds(rounds: int = 5) -> float:
    from groupcoord.coordinator.broker import Broker, new_event_loop

    times = []
    for _ in range(rounds):
        loop = new_event_loop()
        broker = Broker(fsync="never")
        t0 = time.perf_counter()
        loop.run_until_complete(broker.start())
        times.append(time.perf_counter() - t0)
        loop.run_until_complete(broker.stop())
        loop.close()
    return statistics.median(times)


def daemon_startup_seconds(rounds: int = 5) -> float:
    server_cores, _ = _cores()
    times = []
    for _ in range(rounds):
        with groupcoord(server_cores) as (_, seconds):
            times.append(seconds)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.wire_bench")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pipeline", type=int, default=8)
    parser.add_argument("--processes", type=int, default=2, help="client processes for the 64-connection runs")
    parser.add_argument("--requests", default="api_versions,metadata", help="comma-separated, from bench.requests.REQUESTS")
    ns = parser.parse_args(argv)
    server_cores, client_cores = _cores()
    print(f"server cores {server_cores}, client cores {client_cores}, {ns.seconds:.0f} s per run, pipeline {ns.pipeline}")

    results: dict[tuple[str, int], LoadResult] = {}
    with bare(server_cores) as (address, _):
        for conns in (1, 64):
            r = run_load(address, "api_versions", conns, ns.pipeline, ns.seconds, processes=1 if conns == 1 else ns.processes, client_cores=client_cores)
            r.request = "bare-ceiling"
            results[("bare", conns)] = r
            print(r.line())
    with groupcoord(server_cores) as (address, _):
        for request in ns.requests.split(","):
            for conns in (1, 64):
                r = run_load(address, request, conns, ns.pipeline, ns.seconds, processes=1 if conns == 1 else ns.processes,
                             client_cores=client_cores, tag=f"{request}-{conns}")
                results[(request, conns)] = r
                ceiling = results[("bare", conns)].rate
                print(f"{r.line()}   = {r.rate / ceiling:.2f} x ceiling")
    print(f"start-up, embedded Broker.start(): median {embedded_startup_seconds() * 1000:.1f} ms")
    print(f"start-up, daemon spawn to 'listening on': median {daemon_startup_seconds() * 1000:.0f} ms")


if __name__ == "__main__":
    main()
