"""OffsetDelete: an operator removes offsets of topics the group no longer consumes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.offsets.pending import has_pending
from groupcoord.coordinator.groups.offsets.tombstones import delete_offsets
from groupcoord.coordinator.groups.offsets.topics import known_partition
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.names import CONSUMER_PROTOCOL_TYPE
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import OffsetDelete  # annotations only


def handle_offset_delete(state: ShardState, req: OffsetDelete, token: Any, now: int) -> Effects:
    fx = Effects()
    group = state.consumer_groups.get(req.group_id) or state.groups.get(req.group_id)
    # A KIP-848 group accepts OffsetDelete in any state (Kafka's ConsumerGroup.validateOffsetDelete); only its
    # subscribed topics are refused, below. A classic group must exist and, unless it is a consumer group,
    # be Empty.
    error = state.request_error(req.group_id)
    if error is None and req.group_id in state.share_groups:  # ShareGroup.validateOffsetDelete
        error = ErrorCode.group_id_not_found
    elif error is None and req.group_id not in state.consumer_groups:
        if group is None or group.state is GroupState.DEAD:
            error = ErrorCode.group_id_not_found
        elif group.state is not GroupState.EMPTY and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            error = ErrorCode.non_empty_group
    if error is not None:
        fx.reply(token, {"error_code": error, "throttle_time": 0, "topics": []})
        return fx
    topics_out = []
    for topic, partitions in req.topics:
        subscribed = group.is_subscribed_to(topic)
        parts_out = []
        for partition in partitions:
            if not known_partition(state, topic, partition):
                code = ErrorCode.unknown_topic_or_partition
            elif subscribed:
                code = ErrorCode.group_subscribed_to_topic
            else:
                if (topic, partition) in group.offsets or has_pending(state, req.group_id, topic, partition):
                    delete_offsets(state, req.group_id, [(topic, partition)], now, fx)
                code = ErrorCode.none
            parts_out.append({"partition_index": partition, "error_code": code})
        topics_out.append({"name": topic, "partitions": parts_out})
    fx.reply(token, {"error_code": ErrorCode.none, "throttle_time": 0, "topics": topics_out})
    return fx
