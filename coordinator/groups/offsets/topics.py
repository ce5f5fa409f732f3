"""Whether an offset names a partition that exists: Kafka refuses offsets of unknown topics and partitions."""

from __future__ import annotations

from groupcoord.coordinator.groups.shard_state import ShardState


def known_partition(state: ShardState, topic: str, partition: int) -> bool:
    count = state.topics.partition_count(topic) if state.topics is not None else None
    return count is not None and 0 <= partition < count
