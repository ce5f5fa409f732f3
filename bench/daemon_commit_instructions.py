"""Instructions the daemon executes per OffsetCommit under the real socket load (valgrind callgrind's Ir count,
every thread): bench.server_cpu's load (bench.loadgen, 64 connections x 8 in flight, standalone v8 commits, each
connection its own group) against ``python -m groupcoord serve`` run under callgrind.

    python -m bench.daemon_commit_instructions                           # fsync=batch, 3 runs
    python -m bench.daemon_commit_instructions --ab /work/main           # alternating: that tree, this tree
    python -m bench.daemon_commit_instructions --keep-dumps /tmp/dumps   # for callgrind_annotate

Why: bench.commit_instructions counts a commit in process (no sockets, no event loop turns of its own, a C-call
transport); bench.server_cpu times the daemon, but its µs vary 2x between processes on the shared machine. This
is the daemon's count, to set beside the in-process one and find, with ``callgrind_annotate``, what the daemon
does per commit that the in-process harness does not (the event loop's reads and writes, timers, the storage
thread under real load).

How (bench.group_instructions's method): the daemon starts under valgrind (core 0, the clients on core 1), a
warm-up load of the measured connections' own groups runs (retried while the coordinator partitions load), the
daemon's own warm-up imports are waited for (``CallgrindDaemon.settle``), then two bounded loads of the same groups are measured, each between ``callgrind_control -z`` and ``-d``: ``--requests``
commits, then three times as many. Each load's fixed cost (the client's set-up: per connection a CreateTopics and
a checked commit on connections of their own, the connects and the closes) is the same in both, so the figure is
their difference over the difference of commits answered. Under valgrind the daemon runs ~50x slower, so what
runs by the wall clock (timers, the metrics, the fsync cadence) weighs more per commit than it does at full speed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .group_instructions import callgrind_daemon, client_cores, retry_while_starting
from .heartbeat_instructions import kept_dump, median_summary, sides_of
from .loadgen import run_load

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent  # this worktree
SETTINGS = {"group_initial_rebalance_delay_ms": "0"}  # as bench.server_cpu starts the daemon
LOAD_SECONDS = 600.0  # a bound only: the loads end on their commit count


def one_run(python: str, tree: Path, fsync: str, requests: int, connections: int, pipeline: int,
            keep: str | None = None) -> tuple[float, int]:
    """(instructions per commit, commits the difference covers) of one fresh daemon of ``tree``."""
    cores = client_cores()

    def load(count: int) -> int:
        result = run_load(daemon.bootstrap, "offset_commit", connections, pipeline, LOAD_SECONDS, count,
                          processes=2, client_cores=cores, tag="measured")
        if result.requests != count - count % 2:  # the count is split over the 2 client processes
            raise RuntimeError(f"{result.requests} of {count} commits answered")
        return result.requests

    with callgrind_daemon(fsync, SETTINGS, python, cwd=str(tree)) as daemon:
        retry_while_starting(lambda: load(connections * pipeline * 4))
        daemon.settle()
        small, n_small = daemon.measure(lambda: load(requests), keep=keep and f"{keep}.small")
        large, n_large = daemon.measure(lambda: load(3 * requests), keep=keep and f"{keep}.large")
        return (large - small) / (n_large - n_small), n_large - n_small


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=4096, help="commits of the smaller measured load")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--pipeline", type=int, default=8)
    parser.add_argument("--fsync", default="batch", choices=["never", "batch", "always"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of this tree")
    parser.add_argument("--ab", type=Path, default=None, help="another tree, measured alternately with this one")
    parser.add_argument("--ab-python", default=None, help="that tree's interpreter (default: its .venv's)")
    parser.add_argument("--keep-dumps", default=None,
                        help="a folder to keep each run's two dumps in (.small, .large: callgrind_annotate each, the "
                             "difference of a function's counts over the difference of commits is its share per commit)")
    ns = parser.parse_args()
    sides = sides_of(ns, TREE)
    results: dict[str, list[float]] = {name: [] for name, _, _ in sides}
    for run in range(max(1, ns.runs)):
        for name, tree, python in sides:
            keep = kept_dump(ns, "daemon", name, ns.fsync, run + 1)
            per, commits = one_run(python, tree, ns.fsync, ns.requests, ns.connections, ns.pipeline, keep)
            results[name].append(per)
            print(f"{name} fsync={ns.fsync} run {run + 1}: daemon {per:,.0f} instructions per commit over "
                  f"{commits:,} commits; {ns.connections} connections x {ns.pipeline} in flight "
                  f"({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"fsync={ns.fsync}: {median_summary(results)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
