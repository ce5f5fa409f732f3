"""Bring a freshly started broker to the state a measurement assumes: `__consumer_offsets` created and every
one of its partitions loaded and writable, so that Kafka's lazy topic creation and shard loading is not
what gets timed.

Kafka creates `__consumer_offsets` on the first FindCoordinator and then loads each partition's coordinator
shard; until then it answers COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR.
We pick one group id hashing to each partition (Kafka's formula), look all of them up and commit one offset
for each, retrying those errors, within a time limit. groupcoord gets the same treatment.
"""

from __future__ import annotations

import asyncio
import time

from groupcoord.coordinator.groups.hashing import partition_for

from .aioclient import AioConnection

FIND_COORDINATOR, OFFSET_COMMIT, CREATE_TOPICS = 10, 8, 19
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, and UNKNOWN_TOPIC_OR_PARTITION
# while Kafka's metadata cache has not yet seen the topic just created.
RETRIABLE = {14, 15, 16, 3}
WARM_TOPIC = "bench-warm"
WARM_LIMIT_S = 90.0


def group_per_partition(partitions: int) -> list[str]:
    """One group id per `__consumer_offsets` partition, found by counting up (a few hundred tries at most)."""
    chosen: dict[int, str] = {}
    n = 0
    while len(chosen) < partitions and n < 100_000:
        group = f"bench-warm-{n}"
        chosen.setdefault(partition_for(group, partitions), group)
        n += 1
    return [chosen[p] for p in sorted(chosen)]


async def _until_ok(label: str, attempt, deadline: float) -> None:
    """Repeats `attempt()` (which returns the error codes still standing) until none is left."""
    while True:
        errors = await attempt()
        bad = [e for e in errors if e != 0]
        if not bad:
            return
        unexpected = set(bad) - RETRIABLE
        if unexpected:
            raise RuntimeError(f"warming {label}: unexpected error codes {sorted(unexpected)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"warming {label}: still {sorted(set(bad))} after {WARM_LIMIT_S:.0f} s")
        await asyncio.sleep(0.2)


async def warm_offsets(bootstrap: str, partitions: int = 50) -> float:
    """Returns the seconds it took until every offsets partition answered a commit."""
    began = time.monotonic()
    deadline = began + WARM_LIMIT_S
    groups = group_per_partition(partitions)
    conn = await AioConnection.open(bootstrap)
    try:
        await conn.send(CREATE_TOPICS, 7, {"topics": [{"name": WARM_TOPIC, "num_partitions": 1, "replication_factor": 1,
                                                       "assignments": [], "configs": []}],
                                           "timeout": 30000, "validate_only": False})

        async def find() -> list[int]:
            answer = await conn.send(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": groups})
            return [int(c.error_code) for c in answer.coordinators]

        async def commit() -> list[int]:
            answers = await asyncio.gather(*(conn.send(OFFSET_COMMIT, 8, _commit_body(g)) for g in groups))
            return [int(p.error_code) for a in answers for t in a.topics for p in t.partitions]

        await _until_ok("FindCoordinator", find, deadline)
        await _until_ok("OffsetCommit", commit, deadline)
    finally:
        await conn.close()
    return time.monotonic() - began


def _commit_body(group: str) -> dict:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": WARM_TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                            "committed_leader_epoch": -1, "committed_metadata": ""}]}]}


def warm(bootstrap: str) -> float:
    return asyncio.run(warm_offsets(bootstrap))
