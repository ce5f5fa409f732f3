"""Instructions a replay of the offsets log executes per offset commit record (valgrind callgrind's Ir count):
the figure behind bench.replay_bench that the load of other processes does not move.

    python -m bench.replay_instructions                                  # 2,000 groups x 100 partitions, 3 runs
    python -m bench.replay_instructions --ab /work/main                  # alternating: that tree, this tree, x3
    python -m bench.replay_instructions --groups 1000 --runs 1           # another scale (per record: the same)
    python -m bench.replay_instructions --mixed-ids --ab /work/main      # group ids of varied lengths in a batch

bench.replay_bench's replay of 1,000,000 commits took 2.73 s on one day and 3.8-5.4 s on another for the same code
(the shared 2-core machine's states), so a change worth 10 % of it cannot be told from noise by its times. The
instructions executed for the same work are nearly deterministic.

How: this process grows one data directory with bench.replay_bench's ``grow`` (this tree's broker; the log's
format is the same for every tree measured) and then, for each run and each tree, deletes the coordinator's
snapshots (``drop_snapshots``) and starts a child under ``valgrind --tool=callgrind`` with the tree to measure
first on its path. The child imports the broker, says "ready" (the parent zeroes its counters with
``callgrind_control -z``), runs ``Broker.start()`` on the directory (the storage recovery of the clean log, the
50 coordinator partitions' loads: what bench.replay_bench times), says "done" (the parent dumps the counters with
``callgrind_control -d``), then checks that every record was replayed from the log and that the last group's
last partition is served its offset. The figure is the dump's total divided by the records: it includes the
broker's own start (binding, the metrics, the partitions' opening), a fixed cost of a few tens of millions of
instructions, so compare trees at one scale, and read the per-record slope from two scales.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent  # this worktree
TOPIC = "replay-bench"  # bench.replay_bench's
TIMEOUT_S = 1800.0  # one replay under valgrind (50-100x slower), on a loaded machine


# --------------------------------------------------------------------------- the child (under valgrind)


async def _child(data_dir: str, groups: int, partitions: int, rounds: int, last_group: str,
                 handshake: Callable[[str], None]) -> str:
    from groupcoord.coordinator.broker import Broker

    broker = Broker(data_dir=Path(data_dir), listen="127.0.0.1:0", metrics_port=-1, fsync="never",
                    log_cleaner_enable=False, group_coordinator_snapshot_interval_records=0)
    handshake("ready")  # the parent zeroes the counters
    started, cpu = time.perf_counter(), time.process_time()
    await broker.start()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    handshake("done")  # the parent dumps the counters
    try:
        replayed = from_snapshot = 0
        for shard in broker.groups.shards():
            snap, log = broker.groups.last_load(shard.partition)
            from_snapshot += snap
            replayed += log
        records = groups * partitions * rounds
        if replayed < records or from_snapshot:
            raise SystemExit(f"replayed {replayed} records ({from_snapshot} from a snapshot), expected {records}")
        g = groups - 1
        served = broker.groups.committed_offsets(last_group).get((TOPIC, partitions - 1))
        expected = 1_000 * (rounds - 1) + g + partitions - 1  # bench.replay_bench's offset_of
        if served != expected:
            raise SystemExit(f"{last_group} partition {partitions - 1}: served {served}, expected {expected}")
    finally:
        await broker.stop()
    return f"ok {replayed} {wall:.3f} {cpu:.3f}"


def child_main(ns: argparse.Namespace) -> None:
    run_child = runpy.run_path(str(HERE.parent / "heartbeat_instructions.py"))["run_child"]
    run_child(lambda handshake: _child(ns.data_dir, ns.groups, ns.partitions, ns.rounds, ns.last_group, handshake))


# --------------------------------------------------------------------------- the parent


def one_run(tree: Path, python: str, data_dir: Path, groups: int, partitions: int, rounds: int,
            keep: str | None = None, mixed_ids: bool = False) -> tuple[int, int, float, float]:
    """(instructions of the replay, records replayed, wall s and CPU s of it under valgrind). The last group's
    id is named here (``group_name``, this tree's): the child imports the measured tree's bench package, which
    may not have it."""
    from bench.heartbeat_instructions import count_child
    from bench.replay_bench import drop_snapshots, group_name

    drop_snapshots(data_dir)
    args = ("--data-dir", str(data_dir), "--groups", str(groups), "--partitions", str(partitions),
            "--rounds", str(rounds), "--last-group", group_name(groups - 1, mixed_ids))
    total, (replayed, wall, cpu) = count_child(tree, python, HERE, args, keep=keep, timeout_s=TIMEOUT_S)
    assert total is not None
    return total, int(replayed), float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1, help="commits of each (group, partition)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of this tree")
    parser.add_argument("--ab", type=Path, default=None, help="another tree, measured alternately with this one")
    parser.add_argument("--ab-python", default=None, help="that tree's interpreter (default: its .venv's)")
    parser.add_argument("--mixed-ids", action="store_true",
                        help="group ids of varied lengths (bench.replay_bench.group_name); default: one length")
    parser.add_argument("--keep-dumps", default=None, help="a folder to keep each run's dump in (callgrind_annotate)")
    parser.add_argument("--data-dir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--last-group", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        child_main(ns)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is not installed")
    import asyncio

    from bench.heartbeat_instructions import kept_dump, median_summary, sides_of
    from bench.replay_bench import grow

    sides = sides_of(ns, TREE)
    results: dict[str, list[float]] = {name: [] for name, _, _ in sides}
    with tempfile.TemporaryDirectory(prefix="groupcoord-replay-") as tmp:
        data = Path(tmp)
        records = asyncio.run(grow(data, ns.groups, ns.partitions, ns.rounds, ns.mixed_ids))
        print(f"grown: {records:,} offset commit records ({ns.groups:,} groups x {ns.partitions} partitions x "
              f"{ns.rounds} rounds{', mixed ids' if ns.mixed_ids else ''})", flush=True)
        for run in range(max(1, ns.runs)):
            for name, tree, python in sides:
                total, replayed, wall, cpu = one_run(tree, python, data, ns.groups, ns.partitions, ns.rounds,
                                                     kept_dump(ns, name, run + 1), ns.mixed_ids)
                per = total / replayed
                results[name].append(per)
                print(f"{name} run {run + 1}: {total / 1e6:,.1f} M instructions, {per:,.0f} per record replayed "
                      f"({replayed:,}); {wall:.1f} s wall, {cpu:.1f} s CPU under valgrind "
                      f"({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"{median_summary(results, ' per record')}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
