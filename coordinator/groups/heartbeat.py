"""Heartbeat: keeps a member's session alive and tells it when a rebalance is under way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.groups import rebalance as rb
from groupcoord.coordinator.groups.effects import Effects
from groupcoord.coordinator.groups.requests import Heartbeat
from groupcoord.coordinator.groups.state import GroupState
from groupcoord.coordinator.groups.validation import member_group, validate_member
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.shard import GroupShard


def handle_heartbeat(shard: GroupShard, req: Heartbeat, token: Any, now: int) -> Effects:
    fx = Effects()
    fx.reply(token, {"throttle_time": 0, "error_code": _heartbeat(shard, req, now)})
    return fx


def _heartbeat(shard: GroupShard, req: Heartbeat, now: int) -> ErrorCode:
    group = member_group(shard, req.group_id)
    if isinstance(group, ErrorCode):
        return group
    error = validate_member(group, req.member_id, req.group_instance_id)
    if error is not None:
        return error
    if req.generation_id != group.generation:
        return ErrorCode.illegal_generation
    if group.state is GroupState.EMPTY:
        return ErrorCode.unknown_member_id
    rb.schedule_heartbeat(shard, group, group.members[req.member_id], now)
    if group.state is GroupState.PREPARING_REBALANCE:
        return ErrorCode.rebalance_in_progress
    return ErrorCode.none  # CompletingRebalance and Stable: alive, nothing to do
