"""The rebalance mechanics every API shares: prepare, complete the join phase, remove members, purgatory timers.

These are Kafka's GroupCoordinator/GroupMetadataManager rules (prepareRebalance,
onCompleteJoin, removeMemberAndUpdateGroup, the delayed-join and heartbeat
purgatories), expressed as functions over a shard so that each API module
applies the same rule the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupcoord.coordinator.groups.effects import Effects
from groupcoord.coordinator.groups.group import ClassicGroup
from groupcoord.coordinator.groups.member import ClassicMember
from groupcoord.coordinator.groups.records import group_metadata_record
from groupcoord.coordinator.groups.state import CAN_REBALANCE, GroupState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.shard import GroupShard

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

# timer kinds (first element of a timer key)
HEARTBEAT = "heartbeat"
PENDING_MEMBER = "pending-member"
JOIN = "join"
PENDING_SYNC = "pending-sync"

INITIAL_JOIN = "initial"
NORMAL_JOIN = "normal"


# ---------------------------------------------------------------------------- timers


def schedule_heartbeat(shard: GroupShard, group: ClassicGroup, member: ClassicMember, now: int) -> None:
    timeout = NEW_MEMBER_JOIN_TIMEOUT_MS if member.is_new else member.session_timeout_ms
    shard.timers.schedule((HEARTBEAT, group.group_id, member.member_id), now + timeout)


def cancel_heartbeat(shard: GroupShard, group: ClassicGroup, member_id: str) -> None:
    shard.timers.cancel((HEARTBEAT, group.group_id, member_id))


def cancel_group_timers(shard: GroupShard, group: ClassicGroup) -> None:
    for member_id in list(group.members) + list(group.pending_members):
        shard.timers.cancel((HEARTBEAT, group.group_id, member_id))
        shard.timers.cancel((PENDING_MEMBER, group.group_id, member_id))
    shard.timers.cancel((JOIN, group.group_id))
    shard.timers.cancel((PENDING_SYNC, group.group_id))


# ---------------------------------------------------------------------------- responses


def join_error(member_id: str, error: ErrorCode) -> dict:
    return {
        "throttle_time": 0,
        "error_code": error,
        "generation_id": -1,
        "protocol_type": None,
        "protocol_name": None,
        "leader": "",
        "skip_assignment": False,
        "member_id": member_id,
        "members": [],
    }


def join_result(group: ClassicGroup, member_id: str, *, as_leader: bool, leader: str | None = None, skip_assignment: bool = False) -> dict:
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "generation_id": group.generation,
        "protocol_type": group.protocol_type,
        "protocol_name": group.protocol_name,
        "leader": leader if leader is not None else (group.leader_id or ""),
        "skip_assignment": skip_assignment,
        "member_id": member_id,
        "members": group.current_member_metadata() if as_leader else [],
    }


def sync_error(error: ErrorCode) -> dict:
    return {"throttle_time": 0, "error_code": error, "protocol_type": None, "protocol_name": None, "assignment": b""}


def sync_result(group: ClassicGroup, error: ErrorCode, assignment: bytes = b"") -> dict:
    if error != ErrorCode.none:
        return sync_error(error)
    return {
        "throttle_time": 0,
        "error_code": error,
        "protocol_type": group.protocol_type,
        "protocol_name": group.protocol_name,
        "assignment": assignment,
    }


# ---------------------------------------------------------------------------- transitions


def transition(shard: GroupShard, group: ClassicGroup, target: GroupState, now: int, reason: str) -> None:
    old = group.transition(target, now)
    shard.on_transition(group, old, target, reason)


def maybe_prepare_rebalance(shard: GroupShard, group: ClassicGroup, reason: str, now: int, fx: Effects) -> None:
    if group.state in CAN_REBALANCE:
        prepare_rebalance(shard, group, reason, now, fx)


def prepare_rebalance(shard: GroupShard, group: ClassicGroup, reason: str, now: int, fx: Effects) -> None:
    if group.state is GroupState.COMPLETING_REBALANCE:
        reset_and_propagate_assignment_error(shard, group, ErrorCode.rebalance_in_progress, now, fx)
    shard.timers.cancel((PENDING_SYNC, group.group_id))
    was_empty = group.state is GroupState.EMPTY
    group.rebalance_started_ms = now
    group.rebalance_reason = reason
    transition(shard, group, GroupState.PREPARING_REBALANCE, now, reason)
    if was_empty:
        # Kafka's InitialDelayedJoin: wait for more members, extended while they keep coming, bounded by the rebalance timeout.
        delay = shard.config.group_initial_rebalance_delay_ms
        group.join_kind = INITIAL_JOIN
        group.initial_remaining_ms = max(group.rebalance_timeout_ms() - delay, 0)
        shard.timers.schedule((JOIN, group.group_id), now + delay)
    else:
        group.join_kind = NORMAL_JOIN
        shard.timers.schedule((JOIN, group.group_id), now + group.rebalance_timeout_ms())
        try_complete_join(shard, group, now, fx)


def try_complete_join(shard: GroupShard, group: ClassicGroup, now: int, fx: Effects) -> None:
    """Re-checked after every membership change: the join phase ends once every known member has rejoined."""
    if group.state is GroupState.PREPARING_REBALANCE and group.join_kind == NORMAL_JOIN and group.has_all_members_joined():
        complete_join(shard, group, now, fx)


def on_join_deadline(shard: GroupShard, group: ClassicGroup, now: int, fx: Effects) -> None:
    if group.state is not GroupState.PREPARING_REBALANCE:
        return
    if group.join_kind == INITIAL_JOIN and group.new_member_added and group.initial_remaining_ms > 0:
        group.new_member_added = False
        delay = min(shard.config.group_initial_rebalance_delay_ms, group.initial_remaining_ms)
        group.initial_remaining_ms = max(group.initial_remaining_ms - delay, 0)
        shard.timers.schedule((JOIN, group.group_id), now + delay)
        return
    complete_join(shard, group, now, fx)


def complete_join(shard: GroupShard, group: ClassicGroup, now: int, fx: Effects) -> None:
    shard.timers.cancel((JOIN, group.group_id))
    group.join_kind = None
    for member in group.not_yet_rejoined():
        if not member.is_static:
            shard.log_member(group, member.member_id, "left", "did not rejoin before the rebalance timeout")
            cancel_heartbeat(shard, group, member.member_id)
            _drop_member(shard, group, member, now, fx)
    if group.state is GroupState.DEAD:
        return
    if group.members and not group.maybe_elect_new_joined_leader():
        # Nobody rejoined (only static members that did not come back): wait another round for their sessions to expire.
        group.join_kind = NORMAL_JOIN
        shard.timers.schedule((JOIN, group.group_id), now + group.rebalance_timeout_ms())
        return
    group.generation += 1
    if group.members:
        group.protocol_name = group.select_protocol()
        target = GroupState.COMPLETING_REBALANCE
    else:
        group.protocol_name = None
        target = GroupState.EMPTY
    transition(shard, group, target, now, f"join phase of generation {group.generation} complete")
    group.subscribed = group.compute_subscribed_topics()
    group.pending_sync.clear()
    shard.observer.on_rebalance(group.group_id, group.generation, (now - group.rebalance_started_ms) / 1000.0, group.rebalance_reason)
    if target is GroupState.EMPTY:
        fx.write(*group_metadata_record(group, {}))
        return
    for member in group.members.values():
        if member.is_awaiting_join:
            as_leader = group.is_leader(member.member_id)
            fx.reply(member.join_token, join_result(group, member.member_id, as_leader=as_leader))
            group.set_join_token(member, None)
        member.is_new = False
        schedule_heartbeat(shard, group, member, now)
        group.pending_sync.add(member.member_id)
    shard.timers.schedule((PENDING_SYNC, group.group_id), now + group.rebalance_timeout_ms())


# ---------------------------------------------------------------------------- assignments


def propagate_assignment(shard: GroupShard, group: ClassicGroup, error: ErrorCode, now: int, fx: Effects) -> None:
    for member in group.members.values():
        if member.is_awaiting_sync:
            fx.reply(member.sync_token, sync_result(group, error, member.assignment if error == ErrorCode.none else b""))
            member.sync_token = None
            schedule_heartbeat(shard, group, member, now)


def reset_and_propagate_assignment_error(shard: GroupShard, group: ClassicGroup, error: ErrorCode, now: int, fx: Effects) -> None:
    for member in group.members.values():
        member.assignment = b""
    propagate_assignment(shard, group, error, now, fx)


# ---------------------------------------------------------------------------- membership


def _drop_member(shard: GroupShard, group: ClassicGroup, member: ClassicMember, now: int, fx: Effects) -> None:
    """Take a member out of the group, answering whatever request of it the coordinator still holds."""
    if member.is_awaiting_join:
        fx.reply(member.join_token, join_error("", ErrorCode.unknown_member_id))
    if member.is_awaiting_sync:
        fx.reply(member.sync_token, sync_result(group, ErrorCode.unknown_member_id))
        member.sync_token = None
    group.remove(member.member_id)


def remove_member_and_update_group(shard: GroupShard, group: ClassicGroup, member: ClassicMember, reason: str, now: int, fx: Effects) -> None:
    cancel_heartbeat(shard, group, member.member_id)
    _drop_member(shard, group, member, now, fx)
    if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
        maybe_prepare_rebalance(shard, group, reason, now, fx)
    elif group.state is GroupState.PREPARING_REBALANCE:
        try_complete_join(shard, group, now, fx)


def remove_pending_member_and_update_group(shard: GroupShard, group: ClassicGroup, member_id: str, now: int, fx: Effects) -> None:
    group.pending_members.discard(member_id)
    shard.timers.cancel((PENDING_MEMBER, group.group_id, member_id))
    if group.state is GroupState.PREPARING_REBALANCE:
        try_complete_join(shard, group, now, fx)


def on_heartbeat_deadline(shard: GroupShard, group: ClassicGroup, member_id: str, now: int, fx: Effects) -> None:
    member = group.members.get(member_id)
    if member is None or group.state is GroupState.DEAD:
        return
    if member.has_satisfied_heartbeat():
        return
    reason = f"member {member_id} expired: no heartbeat within its session timeout"
    shard.log_member(group, member_id, "expired", reason)
    remove_member_and_update_group(shard, group, member, reason, now, fx)


def on_pending_sync_deadline(shard: GroupShard, group: ClassicGroup, now: int, fx: Effects) -> None:
    """Members that joined but never sent SyncGroup are removed and the group rebalances (Kafka's pending-sync timeout)."""
    if group.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not group.pending_sync:
        return
    missing = sorted(group.pending_sync)
    for member_id in missing:
        member = group.members.get(member_id)
        if member is not None:
            shard.log_member(group, member_id, "expired", "no SyncGroup after the join phase")
            cancel_heartbeat(shard, group, member_id)
            _drop_member(shard, group, member, now, fx)
    group.pending_sync.clear()
    prepare_rebalance(shard, group, f"removing {missing} on pending sync request expiration", now, fx)
