"""Builds the ``__consumer_offsets`` records that describe a classic group (GroupMetadata and its tombstone)."""

from __future__ import annotations

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
)


def group_metadata_record(group: ClassicGroup, assignment: dict[str, bytes] | None = None) -> tuple[GroupMetadataKey, GroupMetadataValue]:
    """The group as Kafka persists it after a completed rebalance; ``assignment`` overrides members' stored ones."""
    assignment = assignment or {}
    members = tuple(
        MemberMetadata(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout=m.rebalance_timeout_ms,
            session_timeout=m.session_timeout_ms,
            subscription=m.metadata(group.protocol_name),
            assignment=assignment.get(m.member_id, m.assignment),
        )
        for m in group.members.values()
    )
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation,
        protocol=group.protocol_name,
        leader=group.leader_id,
        current_state_timestamp=group.current_state_timestamp,
        members=members,
    )
    return GroupMetadataKey(group.group_id), value


def group_tombstone(group_id: str) -> tuple[GroupMetadataKey, None]:
    return GroupMetadataKey(group_id), None

