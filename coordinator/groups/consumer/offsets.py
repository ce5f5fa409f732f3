"""How a consumer group checks offset commits and fetches (Kafka 4.x ConsumerGroup.validateOffsetCommit/Fetch),
and how it is deleted (createGroupTombstoneRecords) when DeleteGroups or the retention pass removes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.coordinator.groups.consumer import records
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup, ConsumerGroupState
from groupcoord.coordinator.groups.effects import Effects
from groupcoord.coordinator.groups.records import offset_record
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.shard import GroupShard

MEMBER_EPOCH_COMMIT_VERSION = 9  # members of the consumer protocol commit with OffsetCommit v9+


def commit_error(group: ConsumerGroup, member_id: str, member_epoch: int, version: int) -> ErrorCode | None:
    if member_epoch < 0 and not group.members:
        return None  # an admin client or a standalone consumer: allowed while the group is empty
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.unknown_member_id
    if version < MEMBER_EPOCH_COMMIT_VERSION:
        return ErrorCode.unsupported_version
    if member_epoch != member.member_epoch:
        return ErrorCode.stale_member_epoch
    return None


def fetch_error(group: ConsumerGroup, member_id: str | None, member_epoch: int) -> ErrorCode | None:
    if member_id is None and member_epoch < 0:
        return None
    member = group.members.get(member_id or "")
    if member is None:
        return ErrorCode.unknown_member_id
    if member_epoch != member.member_epoch:
        return ErrorCode.stale_member_epoch
    return None


def delete_error(group: ConsumerGroup) -> ErrorCode | None:
    return None if group.state is ConsumerGroupState.EMPTY else ErrorCode.non_empty_group


def delete_group(shard: GroupShard, group: ConsumerGroup, now: int, fx: Effects) -> None:
    """Offsets first, then the group's own tombstones in Kafka's order (an empty group has no member records)."""
    from groupcoord.coordinator.groups.consumer.heartbeat import emit
    from groupcoord.coordinator.groups.replay import apply_offset

    for topic, partition in sorted(group.offsets):
        key, value = offset_record(group.group_id, topic, partition, None)
        fx.write(key, value)
        apply_offset(shard, key, value, now)
    gid = group.group_id
    for member_id in sorted(group.members):
        emit(shard, fx, records.current_assignment_tombstone(gid, member_id), now)
    for member_id in sorted(group.target):
        emit(shard, fx, records.target_assignment_tombstone(gid, member_id), now)
    emit(shard, fx, records.target_assignment_epoch_tombstone(gid), now)
    for member_id in sorted(group.members):
        emit(shard, fx, records.member_subscription_tombstone(gid, member_id), now)
    emit(shard, fx, records.group_epoch_tombstone(gid), now)
    shard.consumer_groups.pop(gid, None)
