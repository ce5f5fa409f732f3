"""Removing committed offsets: one tombstone per partition, written and applied (OffsetDelete, expiry, group deletion)."""

from __future__ import annotations

from typing import Iterable

from groupcoord.coordinator.groups.offsets.pending import pending_partitions
from groupcoord.coordinator.groups.offsets.records import offset_record
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState


def delete_offsets(state: ShardState, group_id: str, partitions: Iterable[tuple[str, int]], now: int, fx: Effects) -> None:
    for topic, partition in partitions:
        emit(state, fx, offset_record(group_id, topic, partition, None), now)


def delete_all_offsets(state: ShardState, group_id: str, committed: Iterable[tuple[str, int]], now: int,
                       fx: Effects) -> None:
    """Group deletion (Kafka's deleteAllOffsets): a tombstone per committed offset, and one per partition
    that only has an offset pending in an open transaction, which the tombstone drops."""
    committed = sorted(committed)
    delete_offsets(state, group_id, committed, now, fx)
    delete_offsets(state, group_id, [tp for tp in pending_partitions(state, group_id) if tp not in set(committed)], now, fx)
