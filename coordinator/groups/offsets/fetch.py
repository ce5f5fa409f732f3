"""OffsetFetch: a group's committed offsets, as the group type allows its members to see them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.consumer import offset_checks
from groupcoord.coordinator.groups.offsets.pending import has_pending
from groupcoord.coordinator.groups.offsets_records import OffsetCommitValue
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import OffsetFetch  # annotations only


def partition_answer(partition: int, value: OffsetCommitValue | None, error: ErrorCode = ErrorCode.none) -> dict:
    """One partition of an OffsetFetch answer (no offset: -1, as Kafka answers it)."""
    if value is None:
        return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "", "error_code": error}
    return {
        "partition_index": partition,
        "committed_offset": value.offset,
        "committed_leader_epoch": value.leader_epoch,
        "metadata": value.metadata,
        "error_code": error,
    }


def fetch_offsets(state: ShardState, req: OffsetFetch) -> dict:
    """One group's answer: {"group_id", "error_code", "topics": [...]}; unknown groups simply have no offsets.

    With ``require_stable`` (KIP-447) a partition whose offset is pending in an open transaction answers
    UNSTABLE_OFFSET_COMMIT and no offset, so a consumer taking over never starts from a position the
    transaction may still change.
    """
    error = state.request_error(req.group_id) or ErrorCode.none
    # A share group has no committed offsets: Kafka's ShareGroup.validateOffsetFetch refusal makes every
    # partition answer -1 with no error (OffsetMetadataManager's failAllPartitions), as an unknown group does.
    consumer_group = state.consumer_groups.get(req.group_id) if error == ErrorCode.none else None
    if consumer_group is not None:
        member_error = offset_checks.fetch_error(consumer_group, req.member_id, req.member_epoch)
        if member_error is not None:
            # Kafka answers a member it refuses at the group level only, with no topics.
            return {"group_id": req.group_id, "error_code": member_error, "topics": []}
        offsets = consumer_group.offsets
    else:
        group = state.groups.get(req.group_id) if error == ErrorCode.none else None
        offsets = group.offsets if group is not None and group.state is not GroupState.DEAD else {}
    topics_out = []
    if req.topics is None:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(offsets):
            by_topic.setdefault(topic, []).append(partition)
        requested = [(t, tuple(ps)) for t, ps in by_topic.items()]
    else:
        requested = list(req.topics)
    group_id = req.group_id

    def one(topic: str, partition: int) -> dict:
        if req.require_stable and error == ErrorCode.none and has_pending(state, group_id, topic, partition):
            return partition_answer(partition, None, ErrorCode.unstable_offset_commit)
        return partition_answer(partition, offsets.get((topic, partition)), error)

    for topic, partitions in requested:
        topics_out.append({"name": topic, "partitions": [one(topic, p) for p in partitions]})
    return {"group_id": req.group_id, "error_code": error, "topics": topics_out}
