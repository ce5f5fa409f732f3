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
    protocol = group.protocol_name
    # Positional, in the fields' order (member id, instance id, client id, client host, rebalance and session
    # timeouts, subscription, assignment): a class called with keywords is handed a dict of them, and a loop, not
    # a generator expression (a function object, a frame and a generator on CPython 3.11); one record per rebalance.
    members = []
    for m in group.members.values():
        members.append(MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                      m.rebalance_timeout_ms, m.session_timeout_ms, m.metadata(protocol),
                                      assignment.get(m.member_id, m.assignment)))
    value = GroupMetadataValue(group.protocol_type or "", group.generation, protocol, group.leader_id,
                               group.current_state_timestamp, tuple(members))
    return GroupMetadataKey(group.group_id), value


def group_tombstone(group_id: str) -> tuple[GroupMetadataKey, None]:
    return GroupMetadataKey(group_id), None

