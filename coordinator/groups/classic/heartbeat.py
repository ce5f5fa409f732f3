"""Heartbeat: keeps a member's session alive and tells it when a rebalance is under way."""

from __future__ import annotations

from typing import Any

from groupcoord.coordinator.groups.classic import rebalance
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.classic.validation import member_group, validate_member
from groupcoord.coordinator.groups.requests import Heartbeat
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode


def handle_heartbeat(state: ShardState, req: Heartbeat, token: Any, now: int) -> Effects:
    fx = Effects()
    fx.reply(token, {"throttle_time": 0, "error_code": _heartbeat(state, req, now)})
    return fx


def _heartbeat(state: ShardState, req: Heartbeat, now: int) -> ErrorCode:
    group = member_group(state, req.group_id)
    if isinstance(group, ErrorCode):
        return group
    error = validate_member(group, req.member_id, req.group_instance_id)
    if error is not None:
        return error
    if req.generation_id != group.generation:
        return ErrorCode.illegal_generation
    if group.state is GroupState.EMPTY:
        return ErrorCode.unknown_member_id
    rebalance.schedule_heartbeat(state, group, group.members[req.member_id], now)
    if group.state is GroupState.PREPARING_REBALANCE:
        return ErrorCode.rebalance_in_progress
    return ErrorCode.none  # CompletingRebalance and Stable: alive, nothing to do
