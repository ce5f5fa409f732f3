"""Removing a share-group member (leave, session expiry), and the session timer that does it."""

from __future__ import annotations

from functools import partial

from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share import records, settings
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.coordinator.groups.share.member import ShareMember
from groupcoord.coordinator.groups.share.topics import metadata_hash

SESSION = "sg-session"


def fence_member(state: ShardState, group: ShareGroup, member: ShareMember, now: int, fx: Effects) -> None:
    """Kafka's shareGroupFenceMember: the member's three tombstones, then the group epoch is bumped with the
    metadata hash of what the remaining members subscribe to."""
    gid, mid = group.group_id, member.member_id
    remaining = {t for m in group.members.values() if m.member_id != mid for t in m.subscribed_topic_names}
    new_hash = metadata_hash(state.topics, remaining)
    epoch = group.group_epoch + 1
    emit(state, fx, records.current_assignment_tombstone(gid, mid), now)
    emit(state, fx, records.target_assignment_tombstone(gid, mid), now)
    emit(state, fx, records.member_subscription_tombstone(gid, mid), now)
    emit(state, fx, records.group_epoch(gid, epoch, new_hash), now)
    cancel_session(state, gid, mid)
    if state.share_member_listener is not None:
        # The share partitions release what the member had acquired (Kafka's ShareGroupListener.onMemberLeave).
        state.share_member_listener(gid, mid)


def schedule_session(state: ShardState, group_id: str, member_id: str, now: int) -> None:
    deadline = now + settings.session_timeout_ms(state, group_id)
    state.timer.schedule((SESSION, group_id, member_id), deadline, partial(_on_session_expired, group_id, member_id))


def cancel_session(state: ShardState, group_id: str, member_id: str) -> None:
    state.timer.cancel((SESSION, group_id, member_id))


def schedule_loaded(state: ShardState, now: int) -> None:
    """After a load every share member gets a full session from now (Kafka's onLoaded)."""
    for group in state.share_groups.values():
        for mid in group.members:
            schedule_session(state, group.group_id, mid, now)


def _on_session_expired(group_id: str, member_id: str, state: ShardState, now: int) -> Effects:
    fx = Effects()
    group = state.share_groups.get(group_id)
    member = group.members.get(member_id) if group is not None else None
    if member is not None:
        state.log.info("share group member session expired", group_id=group_id, member_id=member_id)
        state.observer.on_member_expired(group_id, member_id, "session timeout")
        fence_member(state, group, member, now, fx)
    return fx
