"""OffsetCommit: offsets as records, with Kafka's group checks for classic and consumer groups."""

from __future__ import annotations

from typing import Any

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.classic.validation import validate_member
from groupcoord.coordinator.groups.consumer import offset_checks
from groupcoord.coordinator.groups.offsets.records import offset_record
from groupcoord.coordinator.groups.offsets.topics import known_partition
from groupcoord.coordinator.groups.offsets_records import OffsetCommitValue
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.requests import OffsetCommit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

GROUP_ID_NOT_FOUND_VERSION = 9  # OffsetCommit v9+ (KIP-848) reports an unknown group as such
RETENTION_TIME_VERSIONS = range(2, 5)  # OffsetCommit v2-v4 carry a client-chosen retention time


def _commit_group_error(state: ShardState, group: ClassicGroup | None, req: OffsetCommit) -> ErrorCode | None:
    error = state.request_error(req.group_id)
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


def handle_offset_commit(state: ShardState, req: OffsetCommit, token: Any, now: int) -> Effects:
    fx = Effects()
    consumer_group = state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        group_error = state.request_error(req.group_id) or offset_checks.commit_error(
            consumer_group, req.member_id, req.generation_id, req.version)
    else:
        group = state.groups.get(req.group_id)
        group_error = _commit_group_error(state, group, req)
    expire = None
    if req.version in RETENTION_TIME_VERSIONS and req.retention_time_ms != -1:
        expire = now + req.retention_time_ms
    max_metadata = state.config.offset_metadata_max_bytes
    topics_out = []
    committed = 0
    for topic, partitions in req.topics:
        parts_out = []
        for p in partitions:
            if not known_partition(state, topic, p.partition):
                code = ErrorCode.unknown_topic_or_partition
            elif group_error is not None:
                code = group_error
            elif p.metadata is not None and len(p.metadata.encode("utf-8")) > max_metadata:
                code = ErrorCode.offset_metadata_too_large
            else:
                value = OffsetCommitValue(p.offset, p.leader_epoch, p.metadata or "", now, expire)
                emit(state, fx, offset_record(req.group_id, topic, p.partition, value), now)
                committed += 1
                code = ErrorCode.none
            parts_out.append({"partition_index": p.partition, "error_code": code})
        topics_out.append({"name": topic, "partitions": parts_out})
    if committed:
        state.observer.on_offsets_committed(req.group_id, committed)
    fx.reply(token, {"throttle_time": 0, "topics": topics_out})
    return fx
