"""Applies share-group records to a shard's state, live and on load (GroupMetadataManager.replay for ShareGroup*).

A group id belongs to one group type: a share record for an id held by a classic or consumer group is
Kafka's IllegalStateException on replay; here it is logged and skipped, so a bad log cannot stop a load.
"""

from __future__ import annotations

from groupcoord.coordinator.groups import offsets_records as rec  # consumer/share-group records: loaded on first use
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share import state_metadata
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.coordinator.groups.share.member import LEAVE_GROUP_MEMBER_EPOCH, ShareMember
from groupcoord.coordinator.groups.share.records import from_topic_partitions



def is_share_record(key) -> bool:
    return isinstance(key, rec.SHARE_KEYS)


def _group(state: ShardState, group_id: str, create: bool) -> ShareGroup | None:
    group = state.share_groups.get(group_id)
    if group is None and create:
        if group_id in state.consumer_groups or group_id in state.groups:
            state.log.warning("share-group record for a group of another type skipped", group_id=group_id)
            return None
        group = ShareGroup(group_id=group_id)
        state.share_groups[group_id] = group
    return group


def apply(state: ShardState, key, value, now: int) -> None:
    group = _group(state, key.group_id, value is not None)
    if group is None:
        return
    if isinstance(key, rec.ShareGroupMetadataKey):
        if value is None:
            del state.share_groups[key.group_id]
        else:
            group.group_epoch, group.metadata_hash = value.epoch, value.metadata_hash
    elif isinstance(key, rec.ShareGroupMemberMetadataKey):
        if value is None:
            group.members.pop(key.member_id, None)
            return
        old = group.members.get(key.member_id) or ShareMember(member_id=key.member_id)
        group.members[key.member_id] = old.copy(rack_id=value.rack_id, client_id=value.client_id,
                                                client_host=value.client_host,
                                                subscribed_topic_names=frozenset(value.subscribed_topic_names))
    elif isinstance(key, rec.ShareGroupTargetAssignmentMemberKey):
        if value is None:
            group.target.pop(key.member_id, None)
        else:
            group.target[key.member_id] = from_topic_partitions(value.topic_partitions)
    elif isinstance(key, rec.ShareGroupTargetAssignmentMetadataKey):
        if value is None:
            group.assignment_epoch, group.assignment_timestamp = -1, 0
        else:
            group.assignment_epoch, group.assignment_timestamp = value.assignment_epoch, value.assignment_timestamp
    elif isinstance(key, rec.ShareGroupCurrentMemberAssignmentKey):
        old = group.members.get(key.member_id)
        if old is None:
            if value is None:
                return
            old = ShareMember(member_id=key.member_id)
        if value is None:
            group.members[key.member_id] = old.copy(member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                                    previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH, assigned={})
        else:
            group.members[key.member_id] = old.copy(member_epoch=value.member_epoch,
                                                    previous_member_epoch=value.previous_member_epoch, state=value.state,
                                                    assigned=from_topic_partitions(value.assigned_partitions))
    elif isinstance(key, rec.ShareGroupStatePartitionMetadataKey):
        group.partitions = None if value is None else state_metadata.from_value(value, now)


__all__ = ["apply", "is_share_record"]
