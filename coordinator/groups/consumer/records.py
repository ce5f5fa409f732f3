"""The ``__consumer_offsets`` records of a consumer group, as Kafka's GroupCoordinatorRecordHelpers builds them."""

from __future__ import annotations

from groupcoord.coordinator.groups.consumer.member import Assignment, ConsumerMember
from groupcoord.coordinator.groups import offsets_records as rec  # consumer/share-group records: loaded on first use


def topic_partitions(assignment: Assignment) -> tuple[rec.TopicPartitions, ...]:
    """Sorted, so the same assignment always encodes to the same bytes."""
    return tuple(rec.TopicPartitions(t, tuple(sorted(ps))) for t, ps in sorted(assignment.items(), key=lambda kv: str(kv[0])) if ps)


def from_topic_partitions(items) -> Assignment:
    return {tp.topic_id: frozenset(tp.partitions) for tp in items if tp.partitions}


def group_epoch(group_id: str, epoch: int):
    return rec.ConsumerGroupMetadataKey(group_id), rec.ConsumerGroupMetadataValue(epoch)


def group_epoch_tombstone(group_id: str):
    return rec.ConsumerGroupMetadataKey(group_id), None


def member_subscription(group_id: str, m: ConsumerMember):
    value = rec.ConsumerGroupMemberMetadataValue(
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        client_id=m.client_id,
        client_host=m.client_host,
        subscribed_topic_names=tuple(m.subscribed_topic_names),
        subscribed_topic_regex=m.subscribed_topic_regex,
        rebalance_timeout_ms=m.rebalance_timeout_ms,
        server_assignor=m.server_assignor,
    )
    return rec.ConsumerGroupMemberMetadataKey(group_id, m.member_id), value


def member_subscription_tombstone(group_id: str, member_id: str):
    return rec.ConsumerGroupMemberMetadataKey(group_id, member_id), None


def target_assignment(group_id: str, member_id: str, assignment: Assignment):
    return rec.ConsumerGroupTargetAssignmentMemberKey(group_id, member_id), rec.ConsumerGroupTargetAssignmentMemberValue(topic_partitions(assignment))


def target_assignment_tombstone(group_id: str, member_id: str):
    return rec.ConsumerGroupTargetAssignmentMemberKey(group_id, member_id), None


def target_assignment_epoch(group_id: str, epoch: int, timestamp: int):
    """Kafka 4.3's newConsumerGroupTargetAssignmentMetadataRecord: the epoch and when it was computed."""
    return rec.ConsumerGroupTargetAssignmentMetadataKey(group_id), rec.ConsumerGroupTargetAssignmentMetadataValue(epoch, timestamp)


def target_assignment_epoch_tombstone(group_id: str):
    return rec.ConsumerGroupTargetAssignmentMetadataKey(group_id), None


def current_assignment(group_id: str, m: ConsumerMember):
    value = rec.ConsumerGroupCurrentMemberAssignmentValue(
        member_epoch=m.member_epoch,
        previous_member_epoch=m.previous_member_epoch,
        state=int(m.state),
        assigned_partitions=topic_partitions(m.assigned),
        partitions_pending_revocation=topic_partitions(m.pending_revocation),
    )
    return rec.ConsumerGroupCurrentMemberAssignmentKey(group_id, m.member_id), value


def current_assignment_tombstone(group_id: str, member_id: str):
    return rec.ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id), None
