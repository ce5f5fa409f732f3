"""OffsetCommit: offsets as records, with Kafka's group checks for classic and consumer groups."""

from __future__ import annotations

from typing import Any

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.validation import offset_commit_error
from groupcoord.coordinator.groups.consumer import offset_checks
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue
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
    return offset_commit_error(group, req.generation_id, req.member_id, req.group_instance_id, transactional=False)


def handle_offset_commit(state: ShardState, req: OffsetCommit, token: Any, now: int) -> Effects:
    fx = Effects()
    consumer_group = state.consumer_groups.get(req.group_id)
    if req.group_id in state.share_groups:  # ShareGroup.validateOffsetCommit: "Group ... is not a consumer group."
        group_error = state.request_error(req.group_id) or ErrorCode.group_id_not_found
    elif consumer_group is not None:
        group_error = state.request_error(req.group_id) or offset_checks.commit_error(
            consumer_group, req.member_id, req.generation_id, req.version)
    else:
        group = state.groups.get(req.group_id)
        group_error = _commit_group_error(state, group, req)
    expire = None
    if req.version in RETENTION_TIME_VERSIONS and req.retention_time_ms != -1:
        expire = now + req.retention_time_ms
    records = []
    topics_out = []
    group_id = req.group_id
    catalog = state.topics
    max_metadata = state.config.offset_metadata_max_bytes
    for topic, partitions in req.topics:
        # answer_commits' rules, written out in line (this runs for every committed offset): an unknown
        # partition, the group's error, oversized metadata, or accepted. The partition count is read once
        # per topic; nothing between two partitions of a request can change it.
        count = catalog.partition_count(topic) if catalog is not None else None
        parts_out = []
        for p in partitions:
            index = p.partition
            if count is None or not 0 <= index < count:
                code = ErrorCode.unknown_topic_or_partition
            elif group_error is not None:
                code = group_error
            elif p.metadata is not None and len(p.metadata.encode("utf-8")) > max_metadata:
                code = ErrorCode.offset_metadata_too_large
            else:
                records.append((OffsetCommitKey(group_id, topic, index),
                                OffsetCommitValue(p.offset, p.leader_epoch, p.metadata or "", now, expire)))
                code = ErrorCode.none
            parts_out.append({"partition_index": index, "error_code": code})
        topics_out.append({"name": topic, "partitions": parts_out})
    for record in records:
        emit(state, fx, record, now)
    committed = len(records)
    if committed:
        state.observer.on_offsets_committed(req.group_id, committed)
    fx.reply(token, {"throttle_time": 0, "topics": topics_out})
    return fx
