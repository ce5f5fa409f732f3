"""What one join costs the KIP-848 target assignment of a large group: the uniform assignor run on a group of
N members and P partitions with one member more, from the group's current target (what the coordinator does
on an epoch bump) and from nothing (a recompute of every member), in ms, medians of --runs.

    python -m bench.assignor_bench                           # 1,000 members, 1,000 partitions
    python -m bench.assignor_bench --members 10000 --partitions 20000

The builder keeps a member whose target is within its quota as the same object, so the coordinator writes
records only for the members whose target moved; the line says how many did.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from groupcoord.coordinator.groups.consumer.assignors import uniform_homogeneous


def _ms(call, runs: int) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def measure(members: int, partitions: int, runs: int) -> str:
    topic = uuid.uuid4()
    counts, subscribed = {topic: partitions}, frozenset([topic])
    ids = sorted(f"member-{i:06d}" for i in range(members))
    current = uniform_homogeneous(ids, subscribed, {}, counts)
    joined = sorted([*ids, "member-joining"])
    incremental = _ms(lambda: uniform_homogeneous(joined, subscribed, current, counts), runs)
    scratch = _ms(lambda: uniform_homogeneous(joined, subscribed, {}, counts), runs)
    after = uniform_homogeneous(joined, subscribed, current, counts)
    moved = sum(1 for m in joined if after[m] is not current.get(m))
    return (f"one join into {members:,} members / {partitions:,} partitions: {incremental:.2f} ms from the current "
            f"target ({moved:,} members' targets change), {scratch:.2f} ms from nothing")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.assignor_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=21)
    ns = parser.parse_args(argv)
    print(measure(ns.members, ns.partitions, ns.runs))


if __name__ == "__main__":
    main()
