"""Checks the group requests share, each rule in one place: the request's own group id and shard
(Kafka's validateGroupStatus), the group a member request names, and the member's identity (Kafka's
validateMember)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.coordinator.groups.group import ClassicGroup
from groupcoord.coordinator.groups.state import GroupState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.shard import GroupShard


def request_error(shard: GroupShard, group_id: str) -> ErrorCode | None:
    """Every group request: an empty group id is invalid, a shard still replaying its log answers
    COORDINATOR_LOAD_IN_PROGRESS (the client retries), and a shard whose log could not be loaded answers
    COORDINATOR_NOT_AVAILABLE (the client looks for its coordinator again and retries)."""
    if not group_id:
        return ErrorCode.invalid_group_id
    return shard.availability_error()


def member_group(shard: GroupShard, group_id: str) -> ClassicGroup | ErrorCode:
    """The group a member request (SyncGroup, Heartbeat, LeaveGroup) names: an unknown group means the
    member is unknown; a Dead group is being removed and sends the client to find its coordinator again."""
    error = request_error(shard, group_id)
    if error is not None:
        return error
    group = shard.groups.get(group_id)
    if group is None:
        return ErrorCode.unknown_member_id
    if group.state is GroupState.DEAD:
        return ErrorCode.coordinator_not_available
    return group


def validate_member(group: ClassicGroup, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
    """Static members are identified by instance id (a different member id means fenced); dynamic ones by member id."""
    if group_instance_id is not None:
        current = group.static_member_id(group_instance_id)
        if current is None:
            return ErrorCode.unknown_member_id
        if current != member_id:
            return ErrorCode.fenced_instance_id
        return None
    if member_id not in group.members:
        return ErrorCode.unknown_member_id
    return None
