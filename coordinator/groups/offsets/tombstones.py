"""Removing committed offsets: one tombstone per partition, written and applied (OffsetDelete, expiry, group deletion)."""

from __future__ import annotations

from typing import Iterable

from groupcoord.coordinator.groups.offsets.records import offset_record
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState


def delete_offsets(state: ShardState, group_id: str, partitions: Iterable[tuple[str, int]], now: int, fx: Effects) -> None:
    for topic, partition in partitions:
        emit(state, fx, offset_record(group_id, topic, partition, None), now)
