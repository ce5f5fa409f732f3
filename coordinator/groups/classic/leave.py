"""LeaveGroup: members (or, v3+, an admin on their behalf, by instance id) leave at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.groups.classic import rebalance
from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.validation import member_group
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import LeaveGroup, LeavingMember  # annotations only

BATCH_VERSION = 3  # from v3 a request names several members and errors are per member


def handle_leave(state: ShardState, req: LeaveGroup, token: Any, now: int) -> Effects:
    fx = Effects()
    top_error = _top_level_error(state, req)
    results: list[dict] = []
    consumer_group = state.consumer_groups.get(req.group_id) if not state.loading else None
    if consumer_group is not None:
        top_error = None
    if req.group_id in state.share_groups and not state.loading:
        # Kafka's classicGroupLeave refuses a share group as "not found", which its service answers member by
        # member: UNKNOWN_MEMBER_ID for each, nothing at the top.
        results = [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                    "error_code": ErrorCode.unknown_member_id} for m in req.members]
        top_error = results[0]["error_code"] if req.version < BATCH_VERSION and results else ErrorCode.none
        fx.reply(token, {"throttle_time": 0, "error_code": top_error, "members": results})
        return fx
    if top_error is None:
        group = state.groups.get(req.group_id)
        for leaving in req.members:
            if consumer_group is not None:
                from groupcoord.coordinator.groups.consumer import classic_apis as consumer_classic_apis

                code = consumer_classic_apis.leave_one(state, consumer_group, leaving, now, fx)
            else:
                code = _leave_one(state, group, leaving, now, fx)
            results.append({"member_id": leaving.member_id, "group_instance_id": leaving.group_instance_id, "error_code": code})
        top_error = ErrorCode.none
        if req.version < BATCH_VERSION and results:
            top_error = results[0]["error_code"]
    fx.reply(token, {"throttle_time": 0, "error_code": top_error, "members": results})
    return fx


def _top_level_error(state: ShardState, req: LeaveGroup) -> ErrorCode | None:
    group = member_group(state, req.group_id)
    return group if isinstance(group, ErrorCode) else None


def _leave_one(state: ShardState, group: ClassicGroup, leaving: LeavingMember, now: int, fx: Effects) -> ErrorCode:
    member_id = leaving.member_id
    reason = leaving.reason or "the consumer is leaving the group"
    if member_id == "":
        # Administrative removal by group.instance.id (KIP-345): the member id is not known to the caller.
        member_id = group.static_member_id(leaving.group_instance_id) or ""
        if not member_id:
            return ErrorCode.unknown_member_id
    elif member_id in group.pending_members:
        state.log_member(group, member_id, "left", reason)
        rebalance.remove_pending_member_and_update_group(state, group, member_id, now, fx)
        return ErrorCode.none
    elif group.is_static_member_fenced(leaving.group_instance_id, member_id):
        return ErrorCode.fenced_instance_id
    elif member_id not in group.members or (
        leaving.group_instance_id is not None and group.static_member_id(leaving.group_instance_id) is None
    ):
        return ErrorCode.unknown_member_id
    state.log_member(group, member_id, "left", reason)
    rebalance.remove_member_and_update_group(state, group, group.members[member_id], f"removing member {member_id} on LeaveGroup; client reason: {reason}", now, fx)
    return ErrorCode.none
