"""Where the offsets topic's readable records are: per partition, the log start and the last stable offset.

Spark's Kafka source plans one task per topic partition, and `__consumer_offsets` has fifty of them, most
empty on a quiet cluster; asking first (ListOffsets, through the project's admin client) lets a batch read
assign only the partitions that hold records and name its exact ranges. The end is the last stable offset
(ListOffsets with READ_COMMITTED), which is where a read_committed consumer stops: offsets of a
transaction still open lie beyond it.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

from groupcoord.protocol.names import OFFSETS_TOPIC

EARLIEST, LATEST = -2, -1
READ_COMMITTED = 1


async def _ranges(bootstrap: str) -> dict[int, tuple[int, int]]:
    from groupcoord.coordinator.admin.client import AdminClient, ApiKey, check_error

    async with AdminClient(bootstrap) as client:
        cluster = await client.metadata([OFFSETS_TOPIC])
        topic = cluster.topics.get(OFFSETS_TOPIC)
        if topic is None or not topic.partitions:
            return {}
        check_error(topic.error_code, f"Metadata for {OFFSETS_TOPIC}")
        by_leader: dict[int, list[int]] = defaultdict(list)
        for index, partition in topic.partitions.items():
            by_leader[partition.leader].append(index)
        bounds: dict[int, dict[int, int]] = defaultdict(dict)
        for timestamp in (EARLIEST, LATEST):
            for leader, indexes in sorted(by_leader.items()):
                body = {
                    "replica_id": -1,
                    "isolation_level": READ_COMMITTED,
                    "topics": [{"name": OFFSETS_TOPIC, "partitions": [
                        {"partition_index": i, "timestamp": timestamp, "current_leader_epoch": -1} for i in indexes]}],
                    "timeout": int(client.timeout * 1000),
                }
                _, response = await client.request(ApiKey.LIST_OFFSETS, body, node=leader)
                for answered in response.topics:
                    for p in answered.partitions:
                        check_error(p.error_code, f"ListOffsets {OFFSETS_TOPIC}-{p.partition_index}")
                        bounds[int(p.partition_index)][timestamp] = int(p.offset)
        return {index: (b[EARLIEST], b[LATEST]) for index, b in bounds.items()}


def readable_ranges(bootstrap: str) -> dict[int, tuple[int, int]]:
    """{partition: (first offset, last stable offset)} for every offsets partition holding records."""
    return {p: r for p, r in sorted(asyncio.run(_ranges(bootstrap)).items()) if r[1] > r[0] >= 0}
