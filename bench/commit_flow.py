"""How OffsetCommits become durable under socket load: commits, appends and fsyncs per second.

    python -m bench.commit_flow --fsync batch --seconds 5

An embedded broker (this process, one event loop) serves ``bench.loadgen``'s OffsetCommit load (64
connections x 8 in flight by default, each connection its own group, so the groups spread over the
``__consumer_offsets`` shards as in ``bench.compare``) while its log appends and fsyncs are counted. With
group commit, a shard's commits of one loop turn are one batch, one append and (fsync=batch) share one
fsync: commits per append and per fsync say how well that works. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from groupcoord.coordinator.broker import Broker, new_event_loop
from groupcoord.coordinator.ops.logging import configure_logging

from .loadgen import run_load


class Counting:
    def __init__(self) -> None:
        self.appends = 0
        self.fsyncs = 0
        self.fsync_seconds = 0.0


async def run(fsync: str, connections: int, pipeline: int, seconds: float, processes: int) -> None:
    async with Broker(fsync=fsync, metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        counts = Counting()
        metrics = broker.metrics
        assert metrics is not None
        on_append, on_fsync = metrics.on_append, metrics.on_fsync

        def append(seconds_: float, nbytes: int) -> None:
            counts.appends += 1
            on_append(seconds_, nbytes)

        def synced(seconds_: float) -> None:
            counts.fsyncs += 1
            counts.fsync_seconds += seconds_
            on_fsync(seconds_)

        metrics.on_append, metrics.on_fsync = append, synced  # type: ignore[method-assign]
        loop = asyncio.get_running_loop()
        bootstrap = broker.bootstrap_servers
        await loop.run_in_executor(None, run_load, bootstrap, "offset_commit", connections, pipeline, 1.0, 5_000_000,
                                   processes, None, "warm")
        before = (counts.appends, counts.fsyncs, counts.fsync_seconds)
        started = time.perf_counter()
        result = await loop.run_in_executor(None, run_load, bootstrap, "offset_commit", connections, pipeline,
                                            seconds, 5_000_000, processes, None, "measured")
        elapsed = time.perf_counter() - started
        appends, fsyncs = counts.appends - before[0], counts.fsyncs - before[1]
        fsync_s = counts.fsync_seconds - before[2]
        print(result.line())
        print(f"fsync={fsync}: {appends / elapsed:,.0f} appends/s, {fsyncs / elapsed:,.0f} fsyncs/s over "
              f"{elapsed:.1f} s; {result.requests / max(appends, 1):.1f} commits per append, "
              f"{result.requests / max(fsyncs, 1):.1f} per fsync; mean fsync "
              f"{fsync_s / max(fsyncs, 1) * 1000:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fsync", default="batch", choices=["never", "batch", "always"])
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--pipeline", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--processes", type=int, default=2)
    ns = parser.parse_args()
    configure_logging("warning", "json")
    loop = new_event_loop()
    try:
        loop.run_until_complete(run(ns.fsync, ns.connections, ns.pipeline, min(ns.seconds, 60.0), ns.processes))
    finally:
        loop.close()


if __name__ == "__main__":
    main()
