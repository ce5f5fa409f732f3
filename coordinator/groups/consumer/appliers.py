"""Applies consumer-group records to a shard's state: live (every record the coordinator writes) and on load.

Mirrors GroupMetadataManager.replay for the ConsumerGroup* records. A consumer
group takes over the committed offsets of an empty classic group of the same id
(Kafka keeps offsets apart from groups, so they survive that switch).
"""

from __future__ import annotations

from groupcoord.coordinator.groups.consumer.group import INITIAL_EPOCH, ConsumerGroup
from groupcoord.coordinator.groups.consumer.member import LEAVE_GROUP_MEMBER_EPOCH, ConsumerMember, MemberState
from groupcoord.coordinator.groups.consumer.records import from_topic_partitions
from groupcoord.coordinator.groups import offsets_records as rec  # consumer/share-group records: loaded on first use
from groupcoord.coordinator.groups.shard_state import ShardState



def is_consumer_record(key) -> bool:
    return isinstance(key, rec.CONSUMER_KEYS)


def get_or_create(state: ShardState, group_id: str, now: int) -> ConsumerGroup:
    group = state.consumer_groups.get(group_id)
    if group is None:
        group = ConsumerGroup(group_id=group_id, state_timestamp=now)
        classic = state.groups.pop(group_id, None)
        if classic is not None:
            group.offsets = classic.offsets  # an empty classic group's offsets stay with the id
        state.consumer_groups[group_id] = group
    return group


def remove_group(state: ShardState, group_id: str, now: int) -> None:
    group = state.consumer_groups.pop(group_id, None)
    if group is not None and group.offsets:
        shell = state.create_group(group_id, now)  # offsets outlive the group: a standalone group keeps them
        shell.offsets = group.offsets


def apply(state: ShardState, key, value, now: int) -> None:
    gid = key.group_id
    if isinstance(key, rec.ConsumerGroupMetadataKey):
        if value is None:
            remove_group(state, gid, now)
        else:
            get_or_create(state, gid, now).group_epoch = value.epoch
        return
    if isinstance(key, rec.ConsumerGroupPartitionMetadataKey):
        return  # Kafka 4.x no longer relies on it; the subscription metadata is recomputed from the topic catalog
    group = state.consumer_groups.get(gid)
    if group is None:
        if value is None:
            return
        group = get_or_create(state, gid, now)
    if isinstance(key, rec.ConsumerGroupMemberMetadataKey):
        if value is None:
            group.remove_member(key.member_id)
            group.target.pop(key.member_id, None)
            if not group.members:
                group.state_timestamp = now
            return
        old = group.members.get(key.member_id)
        member = old if old is not None else ConsumerMember(member_id=key.member_id)
        if old is not None and old.instance_id != value.instance_id and old.instance_id is not None:
            group.static_members.pop(old.instance_id, None)
        member.instance_id = value.instance_id
        if value.instance_id is not None:
            group.static_members[value.instance_id] = key.member_id
        member.rack_id = value.rack_id
        member.client_id = value.client_id
        member.client_host = value.client_host
        names, regex = tuple(value.subscribed_topic_names), value.subscribed_topic_regex or ""
        if old is not None and (names != member.subscribed_topic_names or regex != member.subscribed_topic_regex):
            group.subscriptions_version += 1  # changed in place: the group's subscription union is stale
        member.subscribed_topic_names, member.subscribed_topic_regex = names, regex
        member.rebalance_timeout_ms = value.rebalance_timeout_ms
        member.server_assignor = value.server_assignor
        if old is None:
            group.set_member(member)
    elif isinstance(key, rec.ConsumerGroupTargetAssignmentMemberKey):
        if value is None:
            group.target.pop(key.member_id, None)
        else:
            group.target[key.member_id] = from_topic_partitions(value.topic_partitions)
    elif isinstance(key, rec.ConsumerGroupTargetAssignmentMetadataKey):
        if value is None:
            group.assignment_epoch, group.assignment_timestamp = INITIAL_EPOCH, 0
        else:
            group.assignment_epoch, group.assignment_timestamp = value.assignment_epoch, value.assignment_timestamp
    elif isinstance(key, rec.ConsumerGroupCurrentMemberAssignmentKey):
        old = group.members.get(key.member_id)
        if old is None:
            if value is None:
                return
            old = ConsumerMember(member_id=key.member_id)
        member = ConsumerMember(**{f: getattr(old, f) for f in old.__slots__})
        if value is None:
            member.member_epoch, member.previous_member_epoch = LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH
            member.state, member.assigned, member.pending_revocation = MemberState.STABLE, {}, {}
        else:
            member.member_epoch = value.member_epoch
            member.previous_member_epoch = value.previous_member_epoch
            member.state = MemberState(value.state) if value.state in MemberState._value2member_map_ else MemberState.UNKNOWN
            member.assigned = from_topic_partitions(value.assigned_partitions)
            member.pending_revocation = from_topic_partitions(value.partitions_pending_revocation)
        group.set_member(member)


__all__ = ["apply", "is_consumer_record", "get_or_create", "remove_group"]
