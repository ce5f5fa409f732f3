"""How a consumer group checks offset commits and fetches (Kafka 4.x ConsumerGroup.validateOffsetCommit/Fetch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:  # (the commit and fetch paths import this module: the group's code loads with the first group)
    from groupcoord.coordinator.groups.consumer.group import ConsumerGroup

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
