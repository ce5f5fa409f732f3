"""Fencing a consumer-group member, and the two timers that do it: the session and the rebalance timeout.

Both timer kinds are defined here, once, with the operation they run; the
heartbeat arms them, a leave or a replacement cancels them.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from groupcoord.coordinator.groups.consumer import records
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup
from groupcoord.coordinator.groups.consumer.member import ConsumerMember, MemberState
from groupcoord.coordinator.groups.consumer.subscriptions import group_subscription_metadata
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState

SESSION = "cg-session"
REBALANCE = "cg-rebalance"


def fence_member(state: ShardState, group: ConsumerGroup, member: ConsumerMember, now: int, fx: Effects) -> None:
    """Kafka's consumerGroupFenceMember: tombstones in Kafka's order, then the group epoch is bumped."""
    gid, mid = group.group_id, member.member_id
    emit(state, fx, records.current_assignment_tombstone(gid, mid), now)
    emit(state, fx, records.target_assignment_tombstone(gid, mid), now)
    emit(state, fx, records.member_subscription_tombstone(gid, mid), now)
    group.subscription_metadata = group_subscription_metadata(state, group.members)
    emit(state, fx, records.group_epoch(gid, group.group_epoch + 1), now)
    cancel_member_timers(state, gid, mid)


# ---------------------------------------------------------------------------- timers


def schedule_session(state: ShardState, group_id: str, member_id: str, now: int) -> None:
    """A member's session runs from its last heartbeat."""
    deadline = now + state.consumer_session_timeout_ms(group_id)
    state.timer.schedule((SESSION, group_id, member_id), deadline, partial(_member_deadline, _on_session_expired, group_id, member_id))


def arm_rebalance_timeout(state: ShardState, group_id: str, member: ConsumerMember, now: int) -> None:
    """A member that must revoke partitions has its rebalance timeout to do so; any other has no such deadline."""
    key = (REBALANCE, group_id, member.member_id)
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        state.timer.schedule(key, now + max(member.rebalance_timeout_ms, 0),
                             partial(_member_deadline, _on_rebalance_timeout, group_id, member.member_id))
    else:
        state.timer.cancel(key)


def cancel_member_timers(state: ShardState, group_id: str, member_id: str) -> None:
    state.timer.cancel((SESSION, group_id, member_id))
    state.timer.cancel((REBALANCE, group_id, member_id))


def schedule_loaded(state: ShardState, now: int) -> None:
    """After a load every member gets a full session, and unrevoked members a full rebalance timeout (Kafka's onLoaded)."""
    for group in state.consumer_groups.values():
        group.subscription_metadata = group_subscription_metadata(state, group.members)
        for m in group.members.values():
            schedule_session(state, group.group_id, m.member_id, now)
            if m.state is MemberState.UNREVOKED_PARTITIONS:
                arm_rebalance_timeout(state, group.group_id, m, now)


# The timers' operations: each acts on the member as it is when the deadline passes, if it is still there.
# (``partial`` binds the group and member ids; it is cheaper than a closure on the heartbeat path.)


def _member_deadline(handler: Callable[..., None], group_id: str, member_id: str, state: ShardState,
                     now: int) -> Effects:
    """A member's timer operation: `handler` acts on the member as it is when the deadline passes, if it
    is still there (``partial`` binds the handler and the ids)."""
    fx = Effects()
    group = state.consumer_groups.get(group_id)
    member = group.members.get(member_id) if group is not None else None
    if member is not None:
        handler(state, group, member, now, fx)
    return fx


def _on_session_expired(state: ShardState, group: ConsumerGroup, member: ConsumerMember, now: int, fx: Effects) -> None:
    gid, mid = group.group_id, member.member_id
    state.log.info("consumer group member session expired", group_id=gid, member_id=mid)
    state.observer.on_member_expired(gid, mid, "session timeout")
    fence_member(state, group, member, now, fx)


def _on_rebalance_timeout(state: ShardState, group: ConsumerGroup, member: ConsumerMember, now: int, fx: Effects) -> None:
    if member.state is not MemberState.UNREVOKED_PARTITIONS:
        return
    gid, mid = group.group_id, member.member_id
    state.log.info("consumer group member fenced: did not revoke within its rebalance timeout", group_id=gid,
                   member_id=mid, epoch=member.member_epoch, rebalance_timeout_ms=member.rebalance_timeout_ms)
    state.observer.on_member_expired(gid, mid, "rebalance timeout")
    fence_member(state, group, member, now, fx)
