"""Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid (GroupCoordinatorService, 4.x), message for message.

Runs before the request reaches a group, so an invalid request changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import re

from groupcoord.coordinator.groups.consumer.member import LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import ConsumerGroupHeartbeat  # annotations only

CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1  # KIP-1082: from v1 the client generates its member id


def _empty(value: str | None) -> bool:
    """Kafka's throwIfEmptyString: a non-null string that is blank after trimming."""
    return value is not None and not value.strip()


def invalid(req: ConsumerGroupHeartbeat, supported_assignors: tuple[str, ...]) -> tuple[ErrorCode, str] | None:
    bad = ErrorCode.invalid_request
    if req.version >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION or req.member_epoch > 0 or req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
        if _empty(req.member_id):
            return bad, "MemberId can't be empty."
    if _empty(req.group_id):
        return bad, "GroupId can't be empty."
    if _empty(req.instance_id):
        return bad, "InstanceId can't be empty."
    if _empty(req.rack_id):
        return bad, "RackId can't be empty."
    if req.member_epoch == 0:
        if req.rebalance_timeout_ms == -1:
            return bad, "RebalanceTimeoutMs must be provided in first request."
        if req.topic_partitions is None or len(req.topic_partitions) > 0:
            return bad, "TopicPartitions must be empty when (re-)joining."
        if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
            return bad, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
    elif req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            return bad, "InstanceId can't be null."
    elif req.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        return bad, "MemberEpoch is invalid."
    if req.server_assignor is not None and req.server_assignor not in supported_assignors:
        return (
            ErrorCode.unsupported_assignor,
            f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: {', '.join(supported_assignors)}.",
        )
    if req.subscribed_topic_regex:
        try:
            re.compile(req.subscribed_topic_regex)
        except re.error as e:
            # Kafka's text up to the colon; what follows is Python's description of the error, not RE2J's.
            return (ErrorCode.invalid_regular_expression,
                    f"SubscribedTopicRegex `{req.subscribed_topic_regex}` is not a valid regular expression: {e.msg}.")
    return None
