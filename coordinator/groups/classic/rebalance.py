"""The rebalance mechanics every classic API shares: prepare, complete the join phase, remove members, and
the purgatories' timers.

These are Kafka's GroupCoordinator/GroupMetadataManager rules (prepareRebalance,
onCompleteJoin, removeMemberAndUpdateGroup, the delayed-join and heartbeat
purgatories), expressed as functions over a shard's state so that each API module
applies the same rule the same way. Each timer kind is defined here, once, with
the operation it runs when it falls due.
"""

from __future__ import annotations

from typing import Callable

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.member import ClassicMember
from groupcoord.coordinator.groups.classic.records import group_metadata_record
from groupcoord.coordinator.groups.classic.responses import NO_ERROR, join_error, join_result, sync_result
from groupcoord.coordinator.groups.classic.state import (
    CAN_REBALANCE, COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE, GroupState,
)
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.runtime.timers import KeyedOperation
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

# timer kinds (first element of a timer key)
HEARTBEAT = "heartbeat"
"""A member's session, and a pending member's (told MEMBER_ID_REQUIRED) deadline to rejoin with its id: one key
per member id, as Kafka's classicGroupHeartbeatKey, so the pending member's timer becomes its session's when it
joins (a deadline moved in place, not a cancel and a new push)."""
JOIN = "join"
PENDING_SYNC = "pending-sync"

INITIAL_JOIN = "initial"
NORMAL_JOIN = "normal"


# ---------------------------------------------------------------------------- timers


def schedule_heartbeat(state: ShardState, group: ClassicGroup, member: ClassicMember, now: int) -> None:
    """The member's session deadline, from ``now``. A member already scheduled whose deadline only moves later
    (every request of a member in a rebalance: its join, its sync, the join phase's end) keeps its operation,
    which is the same one, and its heap entry (``CoordinatorTimer.extend``); only a new member, or a deadline
    that moves earlier (a new member's first session after its join), is scheduled anew."""
    timeout = NEW_MEMBER_JOIN_TIMEOUT_MS if member.is_new else member.session_timeout_ms
    key = (HEARTBEAT, group.group_id, member.member_id)
    timer = state.timer
    if not timer.extend(key, now + timeout):
        timer.schedule(key, now + timeout, _HEARTBEAT_DEADLINE)


def cancel_heartbeat(state: ShardState, group: ClassicGroup, member_id: str) -> None:
    state.timer.cancel((HEARTBEAT, group.group_id, member_id))


def schedule_pending_member(state: ShardState, group: ClassicGroup, member_id: str, deadline: int) -> None:
    """A member told MEMBER_ID_REQUIRED has until ``deadline`` to rejoin with its id: its heartbeat key, as
    Kafka's classicGroupJoinNewDynamicMember schedules it (its join then moves the same key's deadline)."""
    state.timer.schedule((HEARTBEAT, group.group_id, member_id), deadline, _HEARTBEAT_DEADLINE)


def cancel_pending_member(state: ShardState, group: ClassicGroup, member_id: str) -> None:
    state.timer.cancel((HEARTBEAT, group.group_id, member_id))


def schedule_join(state: ShardState, group: ClassicGroup, deadline: int) -> None:
    state.timer.schedule((JOIN, group.group_id), deadline, _JOIN_DEADLINE)


def schedule_pending_sync(state: ShardState, group: ClassicGroup, deadline: int) -> None:
    state.timer.schedule((PENDING_SYNC, group.group_id), deadline, _PENDING_SYNC_DEADLINE)


def cancel_group_timers(state: ShardState, group: ClassicGroup) -> None:
    for member_id in list(group.members) + list(group.pending_members):
        state.timer.cancel((HEARTBEAT, group.group_id, member_id))
    state.timer.cancel((JOIN, group.group_id))
    state.timer.cancel((PENDING_SYNC, group.group_id))


def schedule_loaded(state: ShardState, now: int) -> None:
    """Loaded members get a full session from now to heartbeat."""
    for group in state.groups.values():
        for member in group.members.values():
            schedule_heartbeat(state, group, member, now)


# The timers' operations: each runs its rule on the group as it is when the deadline passes, if it still exists.
# One shared ``KeyedOperation`` per kind reads the ids from the timer key ((kind, group id[, member id])), so
# scheduling allocates nothing per key (see runtime/timers.py).


def _member_deadline(handler: Callable[..., None], group_id: str, member_id: str, state: ShardState,
                     now: int) -> Effects:
    """A member's timer operation: `handler` acts on the group as it is when the deadline passes, if the
    group is still there (its kind's ``KeyedOperation`` passes the handler and the ids from the timer key)."""
    fx = Effects()
    group = state.groups.get(group_id)
    if group is not None:
        handler(state, group, member_id, now, fx)
    return fx


def _group_deadline(handler: Callable[..., None], group_id: str, state: ShardState, now: int) -> Effects:
    """A group's timer operation, likewise."""
    fx = Effects()
    group = state.groups.get(group_id)
    if group is not None:
        handler(state, group, now, fx)
    return fx


_HEARTBEAT_DEADLINE = KeyedOperation(lambda key, state, now: _member_deadline(on_member_deadline, key[1], key[2], state, now))
def _join_deadline(key: tuple[str, str], state: ShardState, now: int) -> Effects:
    """The delayed join's operation: the JoinGroup answers of the join phase it completes are given inside it
    (``Effects.at_once``), as handle_join's are; one that writes (the group left Empty) waits for its record."""
    fx = _group_deadline(on_join_deadline, key[1], state, now)
    fx.at_once = True
    return fx


_JOIN_DEADLINE = KeyedOperation(_join_deadline)
_PENDING_SYNC_DEADLINE = KeyedOperation(lambda key, state, now: _group_deadline(on_pending_sync_deadline, key[1], state, now))


# ---------------------------------------------------------------------------- transitions


def transition(state: ShardState, group: ClassicGroup, target: GroupState, now: int, reason: str) -> None:
    old = group.transition(target, now)
    state.on_transition(group, old, target, reason)


def maybe_prepare_rebalance(state: ShardState, group: ClassicGroup, reason: str, now: int, fx: Effects) -> None:
    if group.state in CAN_REBALANCE:
        prepare_rebalance(state, group, reason, now, fx)


def prepare_rebalance(state: ShardState, group: ClassicGroup, reason: str, now: int, fx: Effects) -> None:
    if group.state is COMPLETING_REBALANCE:
        reset_and_propagate_assignment_error(state, group, ErrorCode.rebalance_in_progress, now, fx)
    state.timer.cancel((PENDING_SYNC, group.group_id))
    was_empty = group.state is EMPTY
    group.rebalance_started_ms = now
    group.rebalance_reason = reason
    transition(state, group, PREPARING_REBALANCE, now, reason)
    if was_empty:
        # Kafka's InitialDelayedJoin: wait for more members, extended while they keep coming, bounded by the rebalance timeout.
        delay = state.config.group_initial_rebalance_delay_ms
        group.join_kind = INITIAL_JOIN
        group.initial_remaining_ms = max(group.rebalance_timeout_ms() - delay, 0)
        schedule_join(state, group, now + delay)
    else:
        group.join_kind = NORMAL_JOIN
        schedule_join(state, group, now + group.rebalance_timeout_ms())
        try_complete_join(state, group, now, fx)


def try_complete_join(state: ShardState, group: ClassicGroup, now: int, fx: Effects) -> None:
    """Re-checked after every membership change: the join phase ends once every known member has rejoined."""
    if group.state is PREPARING_REBALANCE and group.join_kind == NORMAL_JOIN and group.has_all_members_joined():
        complete_join(state, group, now, fx)


def on_join_deadline(state: ShardState, group: ClassicGroup, now: int, fx: Effects) -> None:
    if group.state is not PREPARING_REBALANCE:
        return
    if group.join_kind == INITIAL_JOIN and group.new_member_added and group.initial_remaining_ms > 0:
        group.new_member_added = False
        delay = min(state.config.group_initial_rebalance_delay_ms, group.initial_remaining_ms)
        group.initial_remaining_ms = max(group.initial_remaining_ms - delay, 0)
        schedule_join(state, group, now + delay)
        return
    complete_join(state, group, now, fx)


def complete_join(state: ShardState, group: ClassicGroup, now: int, fx: Effects) -> None:
    state.timer.cancel((JOIN, group.group_id))
    group.join_kind = None
    for member in group.not_yet_rejoined():
        if not member.is_static:
            state.log_member(group, member.member_id, "left", "did not rejoin before the rebalance timeout")
            cancel_heartbeat(state, group, member.member_id)
            _drop_member(state, group, member, now, fx)
    if group.state is DEAD:
        return
    if group.members and not group.maybe_elect_new_joined_leader():
        # Nobody rejoined (only static members that did not come back): wait another round for their sessions to expire.
        group.join_kind = NORMAL_JOIN
        schedule_join(state, group, now + group.rebalance_timeout_ms())
        return
    group.generation += 1
    if group.members:
        group.protocol_name = group.select_protocol()
        target = COMPLETING_REBALANCE
    else:
        group.protocol_name = None
        target = EMPTY
    transition(state, group, target, now, f"join phase of generation {group.generation} complete")
    group.subscribed = group.compute_subscribed_topics()
    group.pending_sync.clear()
    state.observer.on_rebalance(group.group_id, group.generation, (now - group.rebalance_started_ms) / 1000.0, group.rebalance_reason)
    if target is EMPTY:
        fx.write(*group_metadata_record(group, {}))
        return
    for member in group.members.values():
        if member.is_awaiting_join:
            as_leader = group.is_leader(member.member_id)
            fx.reply(member.join_token, join_result(group, member.member_id, as_leader=as_leader))
            group.set_join_token(member, None)
        member.is_new = False
        schedule_heartbeat(state, group, member, now)
        group.pending_sync.add(member.member_id)
    schedule_pending_sync(state, group, now + group.rebalance_timeout_ms())


# ---------------------------------------------------------------------------- assignments


def propagate_assignment(state: ShardState, group: ClassicGroup, error: ErrorCode, now: int, fx: Effects) -> None:
    for member in group.members.values():
        if member.is_awaiting_sync:
            fx.reply(member.sync_token, sync_result(group, error, member.assignment if error == NO_ERROR else b""))
            member.sync_token = None
            schedule_heartbeat(state, group, member, now)


def reset_and_propagate_assignment_error(state: ShardState, group: ClassicGroup, error: ErrorCode, now: int, fx: Effects) -> None:
    for member in group.members.values():
        member.assignment = b""
    propagate_assignment(state, group, error, now, fx)


# ---------------------------------------------------------------------------- membership


def _drop_member(state: ShardState, group: ClassicGroup, member: ClassicMember, now: int, fx: Effects) -> None:
    """Take a member out of the group, answering whatever request of it the coordinator still holds."""
    if member.is_awaiting_join:
        fx.reply(member.join_token, join_error("", ErrorCode.unknown_member_id))
    if member.is_awaiting_sync:
        fx.reply(member.sync_token, sync_result(group, ErrorCode.unknown_member_id))
        member.sync_token = None
    group.remove(member.member_id)


def remove_member_and_update_group(state: ShardState, group: ClassicGroup, member: ClassicMember, reason: str, now: int, fx: Effects) -> None:
    cancel_heartbeat(state, group, member.member_id)
    _drop_member(state, group, member, now, fx)
    if group.state in (STABLE, COMPLETING_REBALANCE):
        maybe_prepare_rebalance(state, group, reason, now, fx)
    elif group.state is PREPARING_REBALANCE:
        try_complete_join(state, group, now, fx)


def remove_pending_member_and_update_group(state: ShardState, group: ClassicGroup, member_id: str, now: int, fx: Effects) -> None:
    group.pending_members.discard(member_id)
    cancel_pending_member(state, group, member_id)
    if group.state is PREPARING_REBALANCE:
        try_complete_join(state, group, now, fx)


def on_pending_member_deadline(state: ShardState, group: ClassicGroup, member_id: str, now: int, fx: Effects) -> None:
    if member_id in group.pending_members:
        state.log_member(group, member_id, "expired", "pending member did not rejoin within its session timeout")
        remove_pending_member_and_update_group(state, group, member_id, now, fx)


def on_member_deadline(state: ShardState, group: ClassicGroup, member_id: str, now: int, fx: Effects) -> None:
    """A member id's heartbeat key fell due: a pending member's deadline to rejoin, else a member's session
    (Kafka's expireClassicGroupMemberHeartbeat, which asks the same two questions of the one key)."""
    if member_id in group.pending_members:
        on_pending_member_deadline(state, group, member_id, now, fx)
    else:
        on_heartbeat_deadline(state, group, member_id, now, fx)


def on_heartbeat_deadline(state: ShardState, group: ClassicGroup, member_id: str, now: int, fx: Effects) -> None:
    member = group.members.get(member_id)
    if member is None or group.state is DEAD:
        return
    if member.has_satisfied_heartbeat():
        return
    reason = f"member {member_id} expired: no heartbeat within its session timeout"
    state.log_member(group, member_id, "expired", reason)
    remove_member_and_update_group(state, group, member, reason, now, fx)


def on_pending_sync_deadline(state: ShardState, group: ClassicGroup, now: int, fx: Effects) -> None:
    """Members that joined but never sent SyncGroup are removed and the group rebalances (Kafka's pending-sync timeout)."""
    if group.state not in (COMPLETING_REBALANCE, STABLE) or not group.pending_sync:
        return
    missing = sorted(group.pending_sync)
    for member_id in missing:
        member = group.members.get(member_id)
        if member is not None:
            state.log_member(group, member_id, "expired", "no SyncGroup after the join phase")
            cancel_heartbeat(state, group, member_id)
            _drop_member(state, group, member, now, fx)
    group.pending_sync.clear()
    prepare_rebalance(state, group, f"removing {missing} on pending sync request expiration", now, fx)
