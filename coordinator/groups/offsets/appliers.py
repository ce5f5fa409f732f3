"""Applies an offset commit record (or its tombstone) to the group it belongs to, on load and live alike."""

from __future__ import annotations

from groupcoord.coordinator.groups.offsets.pending import drop_pending
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue
from groupcoord.coordinator.groups.shard_state import ShardState


def apply_offset(state: ShardState, key: OffsetCommitKey, value: OffsetCommitValue | None, now: int) -> None:
    if value is None:
        where = (key.group, key.topic, key.partition)
        state.offset_order.pop(where, None)
        drop_pending(state, key.group, key.topic, key.partition)
        group = state.consumer_groups.get(key.group) or state.groups.get(key.group)
        if group is not None:
            group.offsets.pop((key.topic, key.partition), None)
        return
    apply_offset_fields(state, key.group, key.topic, key.partition, value, now)


def apply_offset_fields(state: ShardState, group_id: str, topic: str, partition: int, value: OffsetCommitValue,
                        now: int) -> None:
    """A committed offset (not a tombstone) from its key's fields: what ``apply_offset`` does, without the key
    object, for the replay's fast path (GroupShard.replay_raw) and live commits alike."""
    group = state.consumer_groups.get(group_id) or state.groups.get(group_id)
    if group is None:
        group = state.create_group(group_id, now)  # a standalone (simple) group: offsets, no membership
    shared = state.topic_partitions.get((topic, partition))  # ShardState.topic_partition, inline: once per record
    group.offsets[shared if shared is not None else state.topic_partition(topic, partition)] = value
    pending = state.pending_by_partition
    if pending and (group_id, topic, partition) in pending:  # only then can its order matter (offset_order)
        state.offset_order[(group_id, topic, partition)] = state.take_offset_order()
