"""Applies ``__consumer_offsets`` records to a shard's in-memory state.

The same functions load a shard at start-up and apply the coordinator's own
offset writes as they happen, so in-memory offsets are by construction what a
replay of the log produces. Group metadata is applied here only on load: live,
the group object *is* the state the record was built from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.coordinator.groups.consumer import replay as consumer_replay
from groupcoord.coordinator.groups.group import ClassicGroup
from groupcoord.coordinator.groups.member import ClassicMember
from groupcoord.coordinator.groups.state import GroupState
from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    UnknownKey,
)

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.shard import GroupShard


def apply_record(shard: GroupShard, key, value, now: int) -> None:
    if isinstance(key, OffsetCommitKey):
        apply_offset(shard, key, value, now)
    elif isinstance(key, GroupMetadataKey):
        apply_group_metadata(shard, key, value, now)
    elif isinstance(key, UnknownKey):
        shard.log.warning("skipping record of unknown type", record_type=key.record_type)
    elif consumer_replay.is_consumer_record(key):
        consumer_replay.apply(shard, key, value, now)
    else:
        # Share/streams group records: those groups are not served by this coordinator; the records stay in the log.
        shard.log.debug("skipping record of a group type not served", record=type(key).__name__)


def apply_offset(shard: GroupShard, key: OffsetCommitKey, value: OffsetCommitValue | None, now: int) -> None:
    group = shard.consumer_groups.get(key.group) or shard.groups.get(key.group)
    if value is None:
        if group is not None:
            group.offsets.pop((key.topic, key.partition), None)
        return
    if group is None:
        group = shard.create_group(key.group, now)  # a standalone (simple) group: offsets, no membership
    group.offsets[(key.topic, key.partition)] = value


def apply_group_metadata(shard: GroupShard, key: GroupMetadataKey, value: GroupMetadataValue | None, now: int) -> None:
    group = shard.groups.get(key.group)
    if value is None:
        if group is None:
            return
        if group.offsets:
            group.reset_to_empty_shell()
        else:
            del shard.groups[key.group]
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
    shard.groups[key.group] = group
