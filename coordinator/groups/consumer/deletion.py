"""Deleting a consumer group (Kafka 4.x ConsumerGroup.validateDeleteGroup / createGroupTombstoneRecords), when
DeleteGroups or the retention pass removes it."""

from __future__ import annotations

from groupcoord.coordinator.groups.consumer import records
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup, ConsumerGroupState
from groupcoord.coordinator.groups.offsets.tombstones import delete_all_offsets
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode


def delete_error(group: ConsumerGroup) -> ErrorCode | None:
    return None if group.state is ConsumerGroupState.EMPTY else ErrorCode.non_empty_group


def delete_group(state: ShardState, group: ConsumerGroup, now: int, fx: Effects) -> None:
    """Offsets first, then the group's own tombstones in Kafka's order (an empty group has no member records)."""
    delete_all_offsets(state, group.group_id, group.offsets, now, fx)
    gid = group.group_id
    for member_id in sorted(group.members):
        emit(state, fx, records.current_assignment_tombstone(gid, member_id), now)
    for member_id in sorted(group.target):
        emit(state, fx, records.target_assignment_tombstone(gid, member_id), now)
    emit(state, fx, records.target_assignment_epoch_tombstone(gid), now)
    for member_id in sorted(group.members):
        emit(state, fx, records.member_subscription_tombstone(gid, member_id), now)
    emit(state, fx, records.group_epoch_tombstone(gid), now)
    state.consumer_groups.pop(gid, None)
