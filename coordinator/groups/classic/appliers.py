"""Applies a classic group's GroupMetadata record (or its tombstone) to the shard's state.

Used on load for every GroupMetadata record, and live for the tombstones the
coordinator writes (through ``replay.emit``). A live GroupMetadata value is only
written, never applied: the group object it was built from already is that state,
including what a record does not carry (parked requests, pending members).
"""

from __future__ import annotations

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.member import ClassicMember
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.offsets_records import GroupMetadataKey, GroupMetadataValue
from groupcoord.coordinator.groups.shard_state import ShardState


def apply_group_metadata(state: ShardState, key: GroupMetadataKey, value: GroupMetadataValue | None, now: int) -> None:
    group = state.groups.get(key.group)
    if value is None:
        if group is None:
            return
        if group.offsets:
            group.reset_to_empty_shell()
        else:
            del state.groups[key.group]
        return
    offsets = group.offsets if group is not None else {}
    group = ClassicGroup(
        group_id=key.group,
        state=GroupState.STABLE if value.members else GroupState.EMPTY,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol,
        generation=value.generation,
        current_state_timestamp=value.current_state_timestamp,
        offsets=offsets,
    )
    for m in value.members:
        member = ClassicMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
            session_timeout_ms=m.session_timeout,
            protocol_type=value.protocol_type,
            protocols=((value.protocol or "", m.subscription),),
            assignment=m.assignment,
        )
        group.add(member)
    group.leader_id = value.leader
    group.subscribed = group.compute_subscribed_topics()
    state.groups[key.group] = group
