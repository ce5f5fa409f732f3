"""Applies an offset commit record (or its tombstone) to the group it belongs to, on load and live alike."""

from __future__ import annotations

from groupcoord.coordinator.groups.offsets.pending import drop_pending
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue
from groupcoord.coordinator.groups.shard_state import ShardState


def apply_offset(state: ShardState, key: OffsetCommitKey, value: OffsetCommitValue | None, now: int) -> None:
    group = state.consumer_groups.get(key.group) or state.groups.get(key.group)
    where = (key.group, key.topic, key.partition)
    if value is None:
        state.offset_order.pop(where, None)
        drop_pending(state, key.group, key.topic, key.partition)
        if group is not None:
            group.offsets.pop((key.topic, key.partition), None)
        return
    if group is None:
        group = state.create_group(key.group, now)  # a standalone (simple) group: offsets, no membership
    group.offsets[(key.topic, key.partition)] = value
    if where in state.pending_by_partition:  # only then can its order matter (ShardState.offset_order)
        state.offset_order[where] = state.take_offset_order()
