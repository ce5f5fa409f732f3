"""Where the server's time goes under socket load: the broker in this process under cProfile, the load
generator (bench.loadgen, 64 connections x 8 in flight) in its own processes.

    python -m bench.socket_profile --request heartbeat --seconds 5
    python -m bench.socket_profile --request offset_commit --fsync batch --top 40

The profile covers the event loop's thread (the request path, the shard write loops, the connection
code); the log's executor threads are not in it. Rates under cProfile are lower than without it: read the
proportions, and bench.loadgen / bench.compare for the rates.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats

from groupcoord.coordinator.broker import Broker, new_event_loop
from groupcoord.coordinator.ops.logging import configure_logging

from .loadgen import add_load_arguments, run_load


async def run(request: str, fsync: str, seconds: float, connections: int, pipeline: int, top: int, sort: str) -> None:
    async with Broker(fsync=fsync, metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        loop = asyncio.get_running_loop()
        bootstrap = broker.bootstrap_servers
        await loop.run_in_executor(None, run_load, bootstrap, request, connections, pipeline, 1.0, 5_000_000, 2, None,
                                   "warm")
        profile = cProfile.Profile()
        profile.enable()
        result = await loop.run_in_executor(None, run_load, bootstrap, request, connections, pipeline, seconds,
                                            5_000_000, 2, None, "profiled")
        profile.disable()
        print(result.line() + "   (under cProfile)")
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(sort).print_stats(top)
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_load_arguments(parser)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime")
    ns = parser.parse_args()
    configure_logging("warning", "json")
    loop = new_event_loop()
    try:
        loop.run_until_complete(run(ns.request, ns.fsync, min(ns.seconds, 60.0), ns.connections, ns.pipeline, ns.top,
                                    ns.sort))
    finally:
        loop.close()


if __name__ == "__main__":
    main()
