"""OffsetCommit: offsets as records, with Kafka's group checks for classic and consumer groups."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from groupcoord.coordinator.clock import Clock
from groupcoord.coordinator.groups.classic.validation import offset_commit_error
from groupcoord.coordinator.groups.consumer import offset_checks
from groupcoord.coordinator.groups.offsets.appliers import apply_offset_fields
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue, new_offset_value
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.requests import OffsetCommit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.memo import Memo

GROUP_ID_NOT_FOUND_VERSION = 9  # OffsetCommit v9+ (KIP-848) reports an unknown group as such
RETENTION_TIME_VERSIONS = range(2, 5)  # OffsetCommit v2-v4 carry a client-chosen retention time


def commit_group_error(state: ShardState, group_id: str, generation: int, member_id: str,
                       group_instance_id: str | None, version: int) -> ErrorCode | None:
    """The error every partition of a commit answers because of its group (None: the group takes it)."""
    if group_id in state.share_groups:  # ShareGroup.validateOffsetCommit: "Group ... is not a consumer group."
        return state.request_error(group_id) or ErrorCode.group_id_not_found
    consumer_group = state.consumer_groups.get(group_id)
    if consumer_group is not None:
        return state.request_error(group_id) or offset_checks.commit_error(
            consumer_group, member_id, generation, version)
    error = state.request_error(group_id)
    if error is not None:
        return error
    group = state.groups.get(group_id)
    if group is None:
        if generation < 0:
            return None  # standalone consumer or admin: a simple group is created by the commit itself
        return ErrorCode.group_id_not_found if version >= GROUP_ID_NOT_FOUND_VERSION else ErrorCode.illegal_generation
    return offset_commit_error(group, generation, member_id, group_instance_id, transactional=False)


OFFSET_KEYS_KEPT = 16384
"""Key objects the lane reuses, by (group, topic, partition): a committer commits the same partitions over and
over (a frozen key is shared safely; emptied when full)."""
_lane_keys = Memo(lambda where: OffsetCommitKey(*where), OFFSET_KEYS_KEPT)


def commit_lane(states: list[ShardState], partitions: Mapping[str, int], queue: Callable[..., None],
                clock: Clock) -> Callable[..., bool]:
    """``commit(group_id, generation, member_id, instance, version, topics, reply, response) -> bool``:
    ``handle_offset_commit`` for a v5+ commit every partition of which it would accept (the server's lane,
    topics as ``read_offset_commit_at`` reads them), on the state of the group's shard (``states[partitions[
    group_id]]``): its records, written to state as that would (the same appliers, the same observer call),
    handed to ``queue(partition, records, reply, response)`` with the request's answer, and True. False, having
    done nothing, for anything else (any partition answering an error, nothing to commit): the handler judges
    it. The group is judged by ``commit_group_error``, the handler's own check."""
    keys = _lane_keys
    wall_ms = clock.wall_ms

    def commit(group_id: str, generation: int, member_id: str, group_instance_id: str | None, version: int,
               topics: list[tuple[str, list[tuple[int, int, int, str | None]]]], reply: Any, response: Any) -> bool:
        partition = partitions[group_id]
        state = states[partition]
        if commit_group_error(state, group_id, generation, member_id, group_instance_id, version) is not None:
            return False
        catalog = state.topics
        if catalog is None or not topics:
            return False
        max_metadata = state.config.offset_metadata_max_bytes
        for topic, partitions_of in topics:
            known = catalog.get(topic)  # the catalog's Topic (partition_count is this look-up and one more call)
            if known is None or not partitions_of:
                return False
            count = known.partitions
            for p in partitions_of:
                if not 0 <= p[0] < count or (p[3] is not None and len(p[3].encode("utf-8")) > max_metadata):
                    return False
        now = wall_ms()
        records = []
        for topic, partitions_of in topics:
            for index, offset, epoch, metadata in partitions_of:
                value = new_offset_value(offset, epoch, metadata or "", now, None)
                records.append((keys[group_id, topic, index], value))
                apply_offset_fields(state, group_id, topic, index, value, now)  # what apply_record does with it
        state.observer.on_offsets_committed(group_id, len(records))
        queue(partition, records, reply, response)
        return True

    return commit


def handle_offset_commit(state: ShardState, req: OffsetCommit, token: Any, now: int) -> Effects:
    fx = Effects()
    group_error = commit_group_error(state, req.group_id, req.generation_id, req.member_id, req.group_instance_id,
                                     req.version)
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
