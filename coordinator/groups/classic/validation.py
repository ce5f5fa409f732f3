"""Checks the classic member requests share, each rule in one place: the group a member request names,
and the member's identity (Kafka's validateMember). The request's own group id and shard are checked by
``ShardState.request_error`` (Kafka's validateGroupStatus), as for every group request."""

from __future__ import annotations

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.state import COMPLETING_REBALANCE, DEAD, EMPTY
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode


def member_group(state: ShardState, group_id: str) -> ClassicGroup | ErrorCode:
    """The group a member request (SyncGroup, Heartbeat, LeaveGroup) names: an unknown group means the
    member is unknown; a Dead group is being removed and sends the client to find its coordinator again."""
    error = state.request_error(group_id)
    if error is not None:
        return error
    group = state.groups.get(group_id)
    if group is None:
        return ErrorCode.unknown_member_id
    if group.state is DEAD:
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


def offset_commit_error(group: ClassicGroup, generation_id: int, member_id: str, group_instance_id: str | None,
                        transactional: bool) -> ErrorCode | None:
    """Kafka's ClassicGroup.validateOffsetCommit. A transactional commit (TxnOffsetCommit) has no rebalance
    check and needs no member when it names none (a producer committing for a group it is not a member of)."""
    if group.state is DEAD:
        return ErrorCode.coordinator_not_available
    if generation_id < 0 and group.state is EMPTY:
        return None  # a simple group: standalone consumer or admin
    if generation_id >= 0 or member_id or group_instance_id is not None:
        error = validate_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation:
            return ErrorCode.illegal_generation
    elif not transactional and group.state is not EMPTY:
        # No member id and no generation: only accepted while nobody is a member of the group.
        return ErrorCode.unknown_member_id
    if not transactional and group.state is COMPLETING_REBALANCE:
        # The member has the new generation but not its assignment yet: tell it to finish the rebalance first.
        return ErrorCode.rebalance_in_progress
    return None
