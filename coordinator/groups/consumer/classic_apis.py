"""Classic-protocol requests (JoinGroup, SyncGroup, LeaveGroup) that name a consumer group, as Kafka 4.3.1 answers.

Kafka 4.x lets classic-protocol members join a consumer group (KIP-848 online
migration); this coordinator does not. What it does serve exactly as Kafka:
LeaveGroup removes consumer-protocol members (by member id, or by instance id
as an administrator), SyncGroup is refused with INCONSISTENT_GROUP_PROTOCOL, and
a JoinGroup into an *empty* consumer group turns it back into a classic group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.coordinator.groups.consumer import records
from groupcoord.coordinator.groups.consumer.fencing import fence_member
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup, ConsumerGroupState
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import LeavingMember  # annotations only

SYNC_ERROR = ErrorCode.inconsistent_group_protocol
JOIN_NON_EMPTY_ERROR = ErrorCode.inconsistent_group_protocol  # Kafka would join the member (online migration)


def leave_one(state: ShardState, group: ConsumerGroup, leaving: LeavingMember, now: int, fx: Effects) -> ErrorCode:
    """One member of a LeaveGroup: Kafka's classicGroupLeaveToConsumerGroup for consumer-protocol members."""
    if leaving.group_instance_id is None:
        member = group.members.get(leaving.member_id)
        if member is None:
            return ErrorCode.unknown_member_id
    else:
        member = group.static_member(leaving.group_instance_id)
        if member is None:
            return ErrorCode.unknown_member_id
        # An administrator removes a static member by its instance id alone (KIP-345).
        if leaving.member_id and member.member_id != leaving.member_id:
            return ErrorCode.fenced_instance_id
    state.log.info("member removed from the consumer group by LeaveGroup", group_id=group.group_id,
                   member_id=member.member_id, reason=leaving.reason)
    state.observer.on_member_left(group.group_id, member.member_id, leaving.reason or "LeaveGroup")
    fence_member(state, group, member, now, fx)
    return ErrorCode.none


def convert_empty_to_classic(state: ShardState, group: ConsumerGroup, now: int, fx: Effects) -> None:
    """An empty consumer group gives way to a classic one: its tombstones are written; its offsets stay."""
    assert group.state is ConsumerGroupState.EMPTY
    gid = group.group_id
    for member_id in sorted(group.target):
        emit(state, fx, records.target_assignment_tombstone(gid, member_id), now)
    emit(state, fx, records.target_assignment_epoch_tombstone(gid), now)
    emit(state, fx, records.group_epoch_tombstone(gid), now)
    state.log.info("empty consumer group converted to a classic group", group_id=gid)
