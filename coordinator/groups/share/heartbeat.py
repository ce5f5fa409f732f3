"""ShareGroupHeartbeat: join (epoch 0), heartbeat, leave (epoch -1), as Kafka 4.3's
GroupMetadataManager.shareGroupHeartbeat / shareGroupLeave and GroupCoordinatorService's request checks.

1. create or update the member; the group epoch is bumped when its subscription changed, when the
   subscribed topics changed (metadata hash) or when initialised partitions are not assigned yet;
2. recompute the target assignment when the group epoch is ahead of it (initialised partitions only);
3. move the member to its target (share members have nothing to revoke);
4. subscribed partitions without share-partition state are written as "initializing", and the reply
   carries the initialisation request the service hands to the share persister once this is durable.
All checks that can fail run before the first record is built, so an error changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share import initialization, records, settings
from groupcoord.coordinator.groups.share.assignment import reconcile, update_target
from groupcoord.coordinator.groups.share.fencing import fence_member, schedule_session
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.coordinator.groups.share.member import LEAVE_GROUP_MEMBER_EPOCH, ShareMember
from groupcoord.coordinator.groups.share.topics import metadata_hash
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import ShareGroupHeartbeat  # annotations only

INITIALIZE = "_initialize"  # reply key the service pops: {topic id: (name, partitions)} to initialise


class HeartbeatError(Exception):
    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def error_response(code: ErrorCode, message: str | None) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval": 0, "assignment": None}


def _blank(value: str | None) -> bool:
    return value is not None and not value.strip()


def invalid(req: ShareGroupHeartbeat) -> tuple[ErrorCode, str] | None:
    """Kafka's throwIfShareGroupHeartbeatRequestIsInvalid, message for message."""
    bad = ErrorCode.invalid_request
    if _blank(req.member_id):
        return bad, "MemberId can't be empty."
    if _blank(req.group_id):
        return bad, "GroupId can't be empty."
    if _blank(req.rack_id):
        return bad, "RackId can't be empty."
    if req.member_epoch == 0:
        if not req.subscribed_topic_names:
            return bad, "SubscribedTopicNames must be set in first request."
    elif req.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
        return bad, "MemberEpoch is invalid."
    return None


def handle(state: ShardState, req: ShareGroupHeartbeat, token: Any, now: int) -> Effects:
    fx = Effects()
    problem = invalid(req)
    if problem is not None:
        fx.reply(token, error_response(*problem))
        return fx
    unavailable = state.availability_error()
    if unavailable is not None:
        fx.reply(token, error_response(unavailable, None))
        return fx
    try:
        if req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            response = leave(state, req, now, fx)
        else:
            response = heartbeat(state, req, now, fx)
    except HeartbeatError as e:
        response = error_response(e.code, e.message)
    fx.reply(token, response)
    return fx


def other_type(state: ShardState, group_id: str) -> bool:
    """A classic or consumer group holds this id (a Dead classic group no longer does)."""
    if group_id in state.consumer_groups:
        return True
    classic = state.groups.get(group_id)
    return classic is not None and classic.state is not GroupState.DEAD


def _group(state: ShardState, group_id: str, create: bool) -> ShareGroup | None:
    """Kafka's getOrMaybeCreateShareGroup, without creating (None: a new group)."""
    group = state.share_groups.get(group_id)
    if group is not None:
        return group
    if other_type(state, group_id):
        raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {group_id} is not a share group.")
    if not create:
        raise HeartbeatError(ErrorCode.group_id_not_found, f"Share group {group_id} not found.")
    return None


def _check_epoch(member: ShareMember, received: int) -> None:
    """Kafka's throwIfShareGroupMemberEpochIsInvalid (the previous epoch is accepted: its reply may be lost)."""
    if received == 0:
        return
    if received > member.member_epoch:
        raise HeartbeatError(
            ErrorCode.fenced_member_epoch,
            f"The share group member has a greater member epoch ({received}) than the one known by the group "
            f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.")
    if received < member.member_epoch and received != member.previous_member_epoch:
        raise HeartbeatError(
            ErrorCode.fenced_member_epoch,
            f"The share group member has a smaller member epoch ({received}) than the one known by the group "
            f"coordinator ({member.member_epoch}), and it does not match the previous member epoch "
            f"({member.previous_member_epoch}). The member must abandon all its partitions and rejoin.")


def heartbeat(state: ShardState, req: ShareGroupHeartbeat, now: int, fx: Effects) -> dict:
    gid, mid = req.group_id, req.member_id
    existing = _group(state, gid, create=req.member_epoch == 0)
    group = existing if existing is not None else ShareGroup(group_id=gid)
    limit = settings.max_size(state)
    if group.size >= limit and (not mid or mid not in group.members):
        raise HeartbeatError(ErrorCode.group_max_size_reached,
                             f"The share group has reached its maximum capacity of {limit} members.")
    member = group.members.get(mid)
    if member is None:
        if req.member_epoch != 0:
            raise HeartbeatError(ErrorCode.unknown_member_id, f"Member {mid} is not a member of group {gid}.")
        member = ShareMember(member_id=mid)
        state.log.info("member joins the share group", group_id=gid, member_id=mid)
    else:
        _check_epoch(member, req.member_epoch)

    # ---- nothing can fail from here on
    if existing is not None:
        initialization.prune_deleted_topics(state, existing, fx, now)
    updated = member.copy(
        rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
        subscribed_topic_names=(frozenset(req.subscribed_topic_names) if req.subscribed_topic_names is not None
                                else member.subscribed_topic_names),
        client_id=req.client_id, client_host=req.client_host)
    pending = group.assignment_epoch >= group.group_epoch and initialization.assignment_pending(group)
    is_new = mid not in group.members
    bump = False
    if updated != member or is_new:
        emit(state, fx, records.member_subscription(gid, updated), now)
        bump = updated.subscribed_topic_names != member.subscribed_topic_names
        if bump:
            state.log.info("share group member updated its subscribed topics", group_id=gid, member_id=mid,
                           topics=sorted(updated.subscribed_topic_names))
    group = state.share_groups[gid]
    bump |= pending
    subscribed = set(group.subscribed_topic_names())
    group_epoch = group.group_epoch
    new_hash = metadata_hash(state.topics, subscribed)
    if new_hash != group.metadata_hash:
        bump = True
    if bump:
        group_epoch += 1
        emit(state, fx, records.group_epoch(gid, group_epoch, new_hash), now)
        state.log.info("bumped share group epoch", group_id=gid, epoch=group_epoch)

    current = group.members[mid]
    target_epoch, target = update_target(state, group, group_epoch, current, fx, now)
    after = reconcile(state, current, target_epoch, target, bump)
    if after != current:
        emit(state, fx, records.current_assignment(gid, after), now)

    schedule_session(state, gid, mid, now)
    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": mid,
                "member_epoch": after.member_epoch, "heartbeat_interval": settings.heartbeat_interval_ms(state, gid),
                "assignment": None}
    if req.member_epoch == 0 or req.subscribed_topic_names is not None or member.assigned != after.assigned:
        response["assignment"] = {"topic_partitions": [
            {"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(after.assigned.items(), key=lambda kv: str(kv[0]))
        ]}
    changes = initialization.changes_to_initialize(state, state.share_groups[gid], subscribed, now)
    if changes:
        initialization.mark_initializing(state, gid, changes, fx, now)
        response[INITIALIZE] = (group_epoch, changes)
    return response


def leave(state: ShardState, req: ShareGroupHeartbeat, now: int, fx: Effects) -> dict:
    gid = req.group_id
    group = state.share_groups.get(gid)
    if group is None:
        if other_type(state, gid):
            raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {gid} is not a share group.")
        raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {gid} not found.")
    member = group.members.get(req.member_id)
    if member is None:
        raise HeartbeatError(ErrorCode.unknown_member_id, f"Member {req.member_id} is not a member of group {gid}.")
    state.log.info("member left the share group", group_id=gid, member_id=member.member_id)
    state.observer.on_member_left(gid, member.member_id, "left the share group")
    fence_member(state, group, member, now, fx)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": req.member_id,
            "member_epoch": req.member_epoch, "heartbeat_interval": 0, "assignment": None}
