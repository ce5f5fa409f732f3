"""Replay of the offsets log: a restart that has no snapshot to start from (issue 13, "replay of 1 million
offset commits <= 3 s"), and the memory the loaded offsets then hold.

    python -m bench.replay_bench                                   # 10,000 groups x 100 partitions = 1,000,000
    python -m bench.replay_bench --groups 1000 --partitions 100 --runs 3
    python -m bench.replay_bench --mixed-ids                       # group ids of varied lengths (group_name)

1. Grows a data directory in process, through the embedded broker (fsync=never): every one of ``--groups``
   standalone groups commits ``--partitions`` partitions of one topic, ``--rounds`` times — one offset commit
   record per partition per round in ``__consumer_offsets``. Stops cleanly, then deletes the group
   coordinator's snapshots, so the next start replays every record from the log (what a first start after an
   upgrade, a lost snapshot or a refused one does; a normal restart replays only the tail past its snapshot).
2. ``--runs`` times, in a fresh process each: ``Broker.start()`` on that directory, timed to the coordinator
   partitions loaded (every record replayed), with that process's CPU time for the same span and its
   resident memory before the start and once loaded; checks that the records replayed are all of them and
   that one group's offset is served. (Each load writes its snapshot again on stop; they are deleted
   between runs.)

Figures, not pass/fail; the replay time is the coordinator's (the loads of the 50 partitions, the storage
recovery of a clean log included), not the interpreter's start-up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOPIC = "replay-bench"


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def group_name(group: int, mixed_ids: bool = False) -> str:
    """The id of group number ``group``: ``replay-000042``, all of one length, by default; with ``mixed_ids``,
    ``replay-42`` and a suffix of ``42 % 7`` letters. Why both: groups that commit at once share a batch of the
    offsets log (the coordinator's appends are grouped), and a batch whose keys are all one length is one run of
    one record shape for protocol/record_shapes.py, while one that mixes lengths, as a real log's mostly do, is
    several runs (one per commit request), read one after the other. The default keeps the figures comparable
    with earlier ones; ``--mixed-ids`` measures the other."""
    if mixed_ids:
        return f"replay-{group}{'x' * (group % 7)}"
    return f"replay-{group:06d}"


async def grow(data_dir: Path, groups: int, partitions: int, rounds: int, mixed_ids: bool = False) -> int:
    from groupcoord.coordinator.broker import Broker
    from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit

    async with Broker(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, fsync="never",
                      log_cleaner_enable=False, group_coordinator_snapshot_interval_records=0) as broker:
        await broker.dataplane.topics.create(TOPIC, partitions)
        pending = []
        for r in range(rounds):
            for g in range(groups):
                parts = tuple(CommitPartition(p, offset_of(r, g, p)) for p in range(partitions))
                pending.append(broker.groups.commit_offsets(OffsetCommit(group_name(g, mixed_ids), ((TOPIC, parts),))))
                if len(pending) >= 500:
                    for answer in await asyncio.gather(*pending):
                        check_answer(answer)
                    pending.clear()
        for answer in await asyncio.gather(*pending):
            check_answer(answer)
    return groups * partitions * rounds


def offset_of(round_: int, group: int, partition: int) -> int:
    return 1_000 * round_ + group + partition


def check_answer(answer: dict) -> None:
    for topic in answer["topics"]:
        for p in topic["partitions"]:
            if p["error_code"]:
                raise RuntimeError(f"commit failed: {p!r}")


def drop_snapshots(data_dir: Path) -> int:
    from groupcoord.coordinator.groups.runtime.snapshot import SNAPSHOT_FILE

    dropped = 0
    for path in data_dir.glob(f"__consumer_offsets-*/{SNAPSHOT_FILE}"):
        path.unlink()
        dropped += 1
    return dropped


async def load_once(data_dir: Path, groups: int, partitions: int, rounds: int, mixed_ids: bool = False) -> dict:
    """In this (fresh) process: start the broker on ``data_dir``, time it to the partitions loaded."""
    from groupcoord.coordinator.broker import Broker

    before = rss_bytes()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    broker = Broker(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, fsync="never",
                    log_cleaner_enable=False, group_coordinator_snapshot_interval_records=0)
    await broker.start()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    try:
        loaded = rss_bytes()
        from_snapshot = replayed = 0
        for shard in broker.groups.shards():
            snap, log = broker.groups.last_load(shard.partition)
            from_snapshot += snap
            replayed += log
        g = groups - 1
        served = broker.groups.committed_offsets(group_name(g, mixed_ids)).get((TOPIC, partitions - 1))
        expected = offset_of(rounds - 1, g, partitions - 1)
        if served != expected:
            raise RuntimeError(f"{group_name(g, mixed_ids)} partition {partitions - 1}: served {served}, "
                               f"expected {expected}")
    finally:
        await broker.stop()
    return {"wall_s": wall, "cpu_s": cpu, "replayed": replayed, "from_snapshot": from_snapshot,
            "rss_before": before, "rss_loaded": loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1, help="commits of each (group, partition)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mixed-ids", action="store_true", help="group ids of varied lengths (see group_name)")
    parser.add_argument("--data-dir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--load-only", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.load_only:
        print(json.dumps(asyncio.run(load_once(Path(ns.data_dir), ns.groups, ns.partitions, ns.rounds, ns.mixed_ids))))
        return
    with tempfile.TemporaryDirectory(prefix="groupcoord-replay-") as tmp:
        data = Path(tmp)
        started = time.perf_counter()
        records = asyncio.run(grow(data, ns.groups, ns.partitions, ns.rounds, ns.mixed_ids))
        size = sum(f.stat().st_size for f in data.glob("__consumer_offsets-*/*.log"))
        print(f"grown: {records:,} offset commit records ({ns.groups:,} groups x {ns.partitions} partitions x "
              f"{ns.rounds} rounds{', mixed ids' if ns.mixed_ids else ''}), offsets log {size / 2**20:,.1f} MiB, in {time.perf_counter() - started:.1f} s",
              flush=True)
        runs = []
        for _ in range(max(1, ns.runs)):
            drop_snapshots(data)
            out = subprocess.run([sys.executable, "-m", "bench.replay_bench", "--load-only", "--data-dir", str(data),
                                  "--groups", str(ns.groups), "--partitions", str(ns.partitions),
                                  "--rounds", str(ns.rounds), *(("--mixed-ids",) if ns.mixed_ids else ())],
                                 check=True, capture_output=True, text=True, timeout=600)
            run = json.loads(out.stdout.strip().splitlines()[-1])
            if run["replayed"] < records or run["from_snapshot"]:
                raise RuntimeError(f"replayed {run['replayed']:,} records ({run['from_snapshot']:,} from a snapshot),"
                                   f" expected all {records:,} from the log")
            runs.append(run)
            print(f"  load: {run['wall_s']:.2f} s wall, {run['cpu_s']:.2f} s CPU, {run['replayed']:,} records "
                  f"replayed; RSS {run['rss_before'] / 2**20:,.1f} -> {run['rss_loaded'] / 2**20:,.1f} MiB "
                  f"({(run['rss_loaded'] - run['rss_before']) / records:,.0f} bytes per offset)", flush=True)
        print(f"median replay of {records:,} offset commits: {statistics.median(r['wall_s'] for r in runs):.2f} s wall, "
              f"{statistics.median(r['cpu_s'] for r in runs):.2f} s CPU; resident once loaded "
              f"{statistics.median(r['rss_loaded'] for r in runs) / 2**20:,.1f} MiB; load average "
              f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
