"""The ``__consumer_offsets`` records of a share group, as Kafka's GroupCoordinatorRecordHelpers builds them."""

from __future__ import annotations

from groupcoord.coordinator.groups.consumer.records import from_topic_partitions, topic_partitions
from groupcoord.coordinator.groups import offsets_records as rec  # consumer/share-group records: loaded on first use
from groupcoord.coordinator.groups.share.member import Assignment, ShareMember

__all__ = ["from_topic_partitions", "group_epoch", "member_subscription", "target_assignment", "target_assignment_epoch",
           "current_assignment"]


def group_epoch(group_id: str, epoch: int, metadata_hash: int):
    return rec.ShareGroupMetadataKey(group_id), rec.ShareGroupMetadataValue(epoch, metadata_hash)


def group_epoch_tombstone(group_id: str):
    return rec.ShareGroupMetadataKey(group_id), None


def member_subscription(group_id: str, m: ShareMember):
    value = rec.ShareGroupMemberMetadataValue(rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
                                          subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)))
    return rec.ShareGroupMemberMetadataKey(group_id, m.member_id), value


def member_subscription_tombstone(group_id: str, member_id: str):
    return rec.ShareGroupMemberMetadataKey(group_id, member_id), None


def target_assignment(group_id: str, member_id: str, assignment: Assignment):
    return (rec.ShareGroupTargetAssignmentMemberKey(group_id, member_id),
            rec.ShareGroupTargetAssignmentMemberValue(topic_partitions(assignment)))


def target_assignment_tombstone(group_id: str, member_id: str):
    return rec.ShareGroupTargetAssignmentMemberKey(group_id, member_id), None


def target_assignment_epoch(group_id: str, epoch: int, timestamp: int):
    return rec.ShareGroupTargetAssignmentMetadataKey(group_id), rec.ShareGroupTargetAssignmentMetadataValue(epoch, timestamp)


def target_assignment_epoch_tombstone(group_id: str):
    return rec.ShareGroupTargetAssignmentMetadataKey(group_id), None


def current_assignment(group_id: str, m: ShareMember):
    value = rec.ShareGroupCurrentMemberAssignmentValue(member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
                                                   state=m.state, assigned_partitions=topic_partitions(m.assigned))
    return rec.ShareGroupCurrentMemberAssignmentKey(group_id, m.member_id), value


def current_assignment_tombstone(group_id: str, member_id: str):
    return rec.ShareGroupCurrentMemberAssignmentKey(group_id, member_id), None
