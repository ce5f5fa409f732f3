"""OffsetCommit, OffsetFetch and OffsetDelete: offsets as records, with Kafka's group checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.groups.consumer import offsets as consumer_offsets
from groupcoord.coordinator.groups.effects import Effects
from groupcoord.coordinator.groups.group import ClassicGroup
from groupcoord.coordinator.groups.records import offset_record
from groupcoord.coordinator.groups.replay import apply_offset
from groupcoord.coordinator.groups.requests import OffsetCommit, OffsetDelete, OffsetFetch
from groupcoord.coordinator.groups.state import GroupState
from groupcoord.coordinator.groups.validation import request_error, validate_member
from groupcoord.protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import OffsetCommitValue

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.shard import GroupShard

GROUP_ID_NOT_FOUND_VERSION = 9  # OffsetCommit v9+ (KIP-848) reports an unknown group as such
RETENTION_TIME_VERSIONS = range(2, 5)  # OffsetCommit v2-v4 carry a client-chosen retention time


def _known_partition(shard: GroupShard, topic: str, partition: int) -> bool:
    count = shard.topics.partition_count(topic) if shard.topics is not None else None
    return count is not None and 0 <= partition < count


# ---------------------------------------------------------------------------- commit


def _commit_group_error(shard: GroupShard, group: ClassicGroup | None, req: OffsetCommit) -> ErrorCode | None:
    error = request_error(shard, req.group_id)
    if error is not None:
        return error
    if group is None:
        if req.generation_id < 0:
            return None  # standalone consumer or admin: a simple group is created by the commit itself
        return ErrorCode.group_id_not_found if req.version >= GROUP_ID_NOT_FOUND_VERSION else ErrorCode.illegal_generation
    if group.state is GroupState.DEAD:
        return ErrorCode.coordinator_not_available
    if req.generation_id < 0 and group.state is GroupState.EMPTY:
        return None
    if req.generation_id >= 0 or req.member_id or req.group_instance_id is not None:
        error = validate_member(group, req.member_id, req.group_instance_id)
        if error is not None:
            return error
        if req.generation_id != group.generation:
            return ErrorCode.illegal_generation
    elif group.state is not GroupState.EMPTY:
        # No member id and no generation: only accepted while nobody is a member of the group.
        return ErrorCode.unknown_member_id
    if group.state is GroupState.COMPLETING_REBALANCE:
        # The member has the new generation but not its assignment yet: tell it to finish the rebalance first.
        return ErrorCode.rebalance_in_progress
    return None


def handle_offset_commit(shard: GroupShard, req: OffsetCommit, token: Any, now: int) -> Effects:
    fx = Effects()
    consumer_group = shard.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        group_error = request_error(shard, req.group_id) or consumer_offsets.commit_error(
            consumer_group, req.member_id, req.generation_id, req.version)
    else:
        group = shard.groups.get(req.group_id)
        group_error = _commit_group_error(shard, group, req)
    expire = None
    if req.version in RETENTION_TIME_VERSIONS and req.retention_time_ms != -1:
        expire = now + req.retention_time_ms
    max_metadata = shard.config.offset_metadata_max_bytes
    topics_out = []
    committed = 0
    for topic, partitions in req.topics:
        parts_out = []
        for p in partitions:
            if not _known_partition(shard, topic, p.partition):
                code = ErrorCode.unknown_topic_or_partition
            elif group_error is not None:
                code = group_error
            elif p.metadata is not None and len(p.metadata.encode("utf-8")) > max_metadata:
                code = ErrorCode.offset_metadata_too_large
            else:
                value = OffsetCommitValue(p.offset, p.leader_epoch, p.metadata or "", now, expire)
                key, value = offset_record(req.group_id, topic, p.partition, value)
                fx.write(key, value)
                apply_offset(shard, key, value, now)
                committed += 1
                code = ErrorCode.none
            parts_out.append({"partition_index": p.partition, "error_code": code})
        topics_out.append({"name": topic, "partitions": parts_out})
    if committed:
        shard.observer.on_offsets_committed(req.group_id, committed)
    fx.reply(token, {"throttle_time": 0, "topics": topics_out})
    return fx


# ---------------------------------------------------------------------------- fetch


def _partition(partition: int, value: OffsetCommitValue | None, error: ErrorCode = ErrorCode.none) -> dict:
    if value is None:
        return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "", "error_code": error}
    return {
        "partition_index": partition,
        "committed_offset": value.offset,
        "committed_leader_epoch": value.leader_epoch,
        "metadata": value.metadata,
        "error_code": error,
    }


def fetch_offsets(shard: GroupShard, req: OffsetFetch) -> dict:
    """One group's answer: {"group_id", "error_code", "topics": [...]}; unknown groups simply have no offsets.

    There are no transactional offsets here, so ``require_stable`` never has pending
    offsets to report (UNSTABLE_OFFSET_COMMIT cannot arise).
    """
    error = request_error(shard, req.group_id) or ErrorCode.none
    consumer_group = shard.consumer_groups.get(req.group_id) if error == ErrorCode.none else None
    if consumer_group is not None:
        member_error = consumer_offsets.fetch_error(consumer_group, req.member_id, req.member_epoch)
        if member_error is not None:
            # Kafka answers a member it refuses at the group level only, with no topics.
            return {"group_id": req.group_id, "error_code": member_error, "topics": []}
        offsets = consumer_group.offsets
    else:
        group = shard.groups.get(req.group_id) if error == ErrorCode.none else None
        offsets = group.offsets if group is not None and group.state is not GroupState.DEAD else {}
    topics_out = []
    if req.topics is None:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(offsets):
            by_topic.setdefault(topic, []).append(partition)
        requested = [(t, tuple(ps)) for t, ps in by_topic.items()]
    else:
        requested = list(req.topics)
    for topic, partitions in requested:
        topics_out.append({"name": topic, "partitions": [_partition(p, offsets.get((topic, p)), error) for p in partitions]})
    return {"group_id": req.group_id, "error_code": error, "topics": topics_out}


# ---------------------------------------------------------------------------- delete


def handle_offset_delete(shard: GroupShard, req: OffsetDelete, token: Any, now: int) -> Effects:
    fx = Effects()
    group = shard.consumer_groups.get(req.group_id) or shard.groups.get(req.group_id)
    # A KIP-848 group accepts OffsetDelete in any state (Kafka's ConsumerGroup.validateOffsetDelete); only its
    # subscribed topics are refused, below. A classic group must exist and, unless it is a consumer group,
    # be Empty.
    error = request_error(shard, req.group_id)
    if error is None and req.group_id not in shard.consumer_groups:
        if group is None or group.state is GroupState.DEAD:
            error = ErrorCode.group_id_not_found
        elif group.state is not GroupState.EMPTY and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            error = ErrorCode.non_empty_group
    if error is not None:
        fx.reply(token, {"error_code": error, "throttle_time": 0, "topics": []})
        return fx
    topics_out = []
    for topic, partitions in req.topics:
        subscribed = group.is_subscribed_to(topic)
        parts_out = []
        for partition in partitions:
            if not _known_partition(shard, topic, partition):
                code = ErrorCode.unknown_topic_or_partition
            elif subscribed:
                code = ErrorCode.group_subscribed_to_topic
            else:
                if (topic, partition) in group.offsets:
                    key, value = offset_record(req.group_id, topic, partition, None)
                    fx.write(key, value)
                    apply_offset(shard, key, value, now)
                code = ErrorCode.none
            parts_out.append({"partition_index": partition, "error_code": code})
        topics_out.append({"name": topic, "partitions": parts_out})
    fx.reply(token, {"error_code": ErrorCode.none, "throttle_time": 0, "topics": topics_out})
    return fx
