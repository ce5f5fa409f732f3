"""Whether an offset names a partition that exists (Kafka refuses offsets of unknown topics and partitions),
and the per-partition answer OffsetCommit and TxnOffsetCommit share."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode


def known_partition(state: ShardState, topic: str, partition: int) -> bool:
    count = state.topics.partition_count(topic) if state.topics is not None else None
    return count is not None and 0 <= partition < count


def answer_commits(state: ShardState, topics: Iterable[tuple[str, Any]], group_error: ErrorCode | None,
                   accept: Callable[[str, Any], None]) -> list[dict]:
    """Each partition of an offset commit answered in request order: an unknown partition (KafkaApis answers
    these before the coordinator), the group's error, oversized metadata, or accepted — ``accept(topic, p)``
    then records it. OffsetCommit's handler (commit.py) has the same rules written out in line, for speed: a
    change here goes there too (tests/coordinator/groups hold both to Kafka's answers)."""
    max_metadata = state.config.offset_metadata_max_bytes
    topics_out = []
    for topic, partitions in topics:
        parts_out = []
        for p in partitions:
            if not known_partition(state, topic, p.partition):
                code = ErrorCode.unknown_topic_or_partition
            elif group_error is not None:
                code = group_error
            elif p.metadata is not None and len(p.metadata.encode("utf-8")) > max_metadata:
                code = ErrorCode.offset_metadata_too_large
            else:
                accept(topic, p)
                code = ErrorCode.none
            parts_out.append({"partition_index": p.partition, "error_code": code})
        topics_out.append({"name": topic, "partitions": parts_out})
    return topics_out
