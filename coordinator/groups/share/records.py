"""The ``__consumer_offsets`` records of a share group, as Kafka's GroupCoordinatorRecordHelpers builds them."""

from __future__ import annotations

from groupcoord.coordinator.groups.consumer.records import from_topic_partitions, topic_partitions
from groupcoord.coordinator.groups.offsets_records import (
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
)
from groupcoord.coordinator.groups.share.member import Assignment, ShareMember

__all__ = ["from_topic_partitions", "group_epoch", "member_subscription", "target_assignment", "target_assignment_epoch",
           "current_assignment"]


def group_epoch(group_id: str, epoch: int, metadata_hash: int):
    return ShareGroupMetadataKey(group_id), ShareGroupMetadataValue(epoch, metadata_hash)


def group_epoch_tombstone(group_id: str):
    return ShareGroupMetadataKey(group_id), None


def member_subscription(group_id: str, m: ShareMember):
    value = ShareGroupMemberMetadataValue(rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
                                          subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)))
    return ShareGroupMemberMetadataKey(group_id, m.member_id), value


def member_subscription_tombstone(group_id: str, member_id: str):
    return ShareGroupMemberMetadataKey(group_id, member_id), None


def target_assignment(group_id: str, member_id: str, assignment: Assignment):
    return (ShareGroupTargetAssignmentMemberKey(group_id, member_id),
            ShareGroupTargetAssignmentMemberValue(topic_partitions(assignment)))


def target_assignment_tombstone(group_id: str, member_id: str):
    return ShareGroupTargetAssignmentMemberKey(group_id, member_id), None


def target_assignment_epoch(group_id: str, epoch: int, timestamp: int):
    return ShareGroupTargetAssignmentMetadataKey(group_id), ShareGroupTargetAssignmentMetadataValue(epoch, timestamp)


def target_assignment_epoch_tombstone(group_id: str):
    return ShareGroupTargetAssignmentMetadataKey(group_id), None


def current_assignment(group_id: str, m: ShareMember):
    value = ShareGroupCurrentMemberAssignmentValue(member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
                                                   state=m.state, assigned_partitions=topic_partitions(m.assigned))
    return ShareGroupCurrentMemberAssignmentKey(group_id, m.member_id), value


def current_assignment_tombstone(group_id: str, member_id: str):
    return ShareGroupCurrentMemberAssignmentKey(group_id, member_id), None
