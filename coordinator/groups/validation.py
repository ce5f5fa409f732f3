"""The member-identity check shared by SyncGroup, Heartbeat and OffsetCommit (Kafka's validateMember)."""

from __future__ import annotations

from coordinator.groups.group import ClassicGroup
from protocol.errors import ErrorCode


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
