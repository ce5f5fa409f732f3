"""Which offsets are pending in an open transaction (Kafka's openTransactionsByGroup look-ups), in one place
for the modules that must respect them: OffsetFetch's require_stable, expiry (never while pending),
OffsetDelete and group deletion (a tombstone also drops the pending offsets of its partition)."""

from __future__ import annotations

from groupcoord.coordinator.groups.shard_state import ShardState


def has_pending(state: ShardState, group_id: str, topic: str, partition: int) -> bool:
    return (group_id, topic, partition) in state.pending_by_partition


def pending_partitions(state: ShardState, group_id: str) -> list[tuple[str, int]]:
    """The group's partitions with an offset pending in some open transaction."""
    return sorted((topic, partition) for group, topic, partition in state.pending_by_partition if group == group_id)


def drop_pending(state: ShardState, group_id: str, topic: str, partition: int) -> None:
    """A tombstone for the partition removes it from every open transaction too (Kafka's replay does)."""
    where = (group_id, topic, partition)
    for producer_id in state.pending_by_partition.pop(where, ()):
        pending = state.pending_txn_offsets.get(producer_id)
        if pending is not None:
            pending.pop(where, None)
