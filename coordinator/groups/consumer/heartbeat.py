"""ConsumerGroupHeartbeat: join (epoch 0), heartbeat, leave (epoch -1 or -2), static member replacement.

Follows GroupMetadataManager.consumerGroupHeartbeat (Kafka 4.x) in three steps:
1. create or update the member; the group epoch is bumped when a subscription or
   the subscribed topics' metadata changed (or the group is new);
2. recompute the target assignment when the group epoch is ahead of it and
   group.consumer.assignment.interval.ms has passed since the last one;
3. reconcile the member towards its target (revoke first, never hand out a
   partition another member still owns).
All checks that can fail run before the first record is built, so an error
changes nothing. Every record is written and applied by ``replay.emit`` as it is built.
Fencing and the member timers are in ``fencing``; steps 2 and 3 in ``assignment``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.dataplane.topic_ids import random_topic_id, to_kafka_string
from groupcoord.coordinator.groups.classic.records import group_tombstone
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.consumer import appliers, records
from groupcoord.coordinator.groups.consumer.assignment import maybe_update_target_assignment, reconcile
from groupcoord.coordinator.groups.consumer.fencing import cancel_member_timers, fence_member, schedule_session
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup
from groupcoord.coordinator.groups.consumer.member import (
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Assignment,
    ConsumerMember,
    MemberState,
    is_subset,
)
from groupcoord.coordinator.groups.consumer.subscriptions import (
    group_subscription_metadata_cached,
    supported_assignors,
)
from groupcoord.coordinator.groups.consumer.validation import invalid
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import ConsumerGroupHeartbeat  # annotations only


class HeartbeatError(Exception):
    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def kafka_uuid() -> str:
    """Kafka's Uuid.randomUuid().toString(): base64url of 16 random bytes, never starting with '-'."""
    return to_kafka_string(random_topic_id())


def error_response(code: ErrorCode, message: str | None) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval": 0, "assignment": None}


# ---------------------------------------------------------------------------- entry point


def handle(state: ShardState, req: ConsumerGroupHeartbeat, token: Any, now: int) -> Effects:
    fx = Effects()
    problem = invalid(req, supported_assignors(state.config))
    if problem is not None:
        fx.reply(token, error_response(*problem))
        return fx
    if state.loading:
        fx.reply(token, error_response(ErrorCode.coordinator_load_in_progress, None))
        return fx
    try:
        if req.member_epoch < 0:
            response = leave(state, req, now, fx)
        else:
            response = heartbeat(state, req, now, fx)
    except HeartbeatError as e:
        response = error_response(e.code, e.message)
    fx.reply(token, response)
    return fx


# ---------------------------------------------------------------------------- lookups (no changes)


def _group_for_heartbeat(state: ShardState, req: ConsumerGroupHeartbeat) -> ConsumerGroup | None:
    """Kafka's getOrMaybeCreateConsumerGroup, without creating: None means "create it" (maybe over an empty classic group)."""
    group = state.consumer_groups.get(req.group_id)
    if group is not None:
        return group
    if req.group_id in state.share_groups:
        raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {req.group_id} is not a consumer group.")
    classic = state.groups.get(req.group_id)
    create = req.member_epoch == 0
    if classic is None or classic.state is GroupState.DEAD:
        if not create:
            raise HeartbeatError(ErrorCode.group_id_not_found, f"Consumer group {req.group_id} not found.")
        return None
    if create and classic.state is GroupState.EMPTY:
        return None
    # Online upgrade of a classic group with members is not served: Kafka's answers when it may not convert
    # (group.consumer.migration.policy without "upgrade").
    if create:
        raise HeartbeatError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {req.group_id} to consumer "
                                                           "group because online upgrade is disabled.")
    raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {req.group_id} is not a consumer group.")


def _check_epoch(member: ConsumerMember, received: int, owned: Assignment | None) -> None:
    """Kafka's throwIfConsumerGroupMemberEpochIsInvalid, including the lost-response tolerance."""
    if received > member.member_epoch:
        raise HeartbeatError(
            ErrorCode.fenced_member_epoch,
            f"The consumer group member has a greater member epoch ({received}) than the one known by the group "
            f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
        )
    if received < member.member_epoch:
        # The previous epoch with a subset of the assignment: the response that bumped the epoch was lost.
        if received != member.previous_member_epoch or not is_subset(owned, member.assigned):
            raise HeartbeatError(
                ErrorCode.fenced_member_epoch,
                f"The consumer group member has a smaller member epoch ({received}) than the one known by the group "
                f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )


def _owned(req: ConsumerGroupHeartbeat) -> Assignment | None:
    if req.topic_partitions is None:
        return None
    owned: dict = {}
    for topic_id, partitions in req.topic_partitions:
        owned[topic_id] = owned.get(topic_id, frozenset()) | frozenset(partitions)
    return {t: ps for t, ps in owned.items() if ps}


def _copy(member: ConsumerMember) -> ConsumerMember:
    return ConsumerMember(**{f: getattr(member, f) for f in member.__slots__})


def _metadata_differs(a: ConsumerMember, b: ConsumerMember) -> bool:
    fields = ("instance_id", "rack_id", "client_id", "client_host", "subscribed_topic_names", "subscribed_topic_regex",
              "rebalance_timeout_ms", "server_assignor")
    return any(getattr(a, f) != getattr(b, f) for f in fields)


# ---------------------------------------------------------------------------- heartbeat / join


def heartbeat(state: ShardState, req: ConsumerGroupHeartbeat, now: int, fx: Effects) -> dict:
    config = state.config
    existing = _group_for_heartbeat(state, req)
    max_size = config.group_consumer_max_size
    if existing is not None and req.member_id not in existing.members and existing.size >= max_size:
        raise HeartbeatError(ErrorCode.group_max_size_reached,
                             f"The consumer group has reached its maximum capacity of {max_size} members.")
    member_id = req.member_id or kafka_uuid()
    owned = _owned(req)
    replaced: ConsumerMember | None = None
    static = existing.static_member(req.instance_id) if existing is not None and req.instance_id is not None else None
    if req.instance_id is not None and req.member_epoch != 0:
        if static is None:
            raise HeartbeatError(ErrorCode.unknown_member_id, f"Instance id {req.instance_id} is unknown.")
        _check_instance_not_fenced(static, req)
        _check_epoch(static, req.member_epoch, owned)
        member = static
    elif static is not None:
        # A static member (re)joins: it takes the place of the instance's member if that one left with epoch -2.
        if static.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise HeartbeatError(
                ErrorCode.unreleased_instance_id,
                f"Static member {member_id} with instance id {req.instance_id} cannot join the group because the "
                f"instance id is owned by {static.member_id} member.",
            )
        replaced = static
        member = _copy(static)
        member.member_id, member.member_epoch, member.previous_member_epoch = member_id, 0, 0
        state.log.info("static member rejoins the consumer group", group_id=req.group_id, member_id=member_id,
                       replaces=static.member_id, instance_id=req.instance_id)
    else:
        member = existing.members.get(member_id) if existing is not None else None
        if member is None:
            if req.member_epoch != 0:
                raise HeartbeatError(ErrorCode.unknown_member_id,
                                     f"Member {member_id} is not a member of group {req.group_id}.")
            member = ConsumerMember(member_id=member_id)
            state.log.info("member joins the consumer group", group_id=req.group_id, member_id=member_id)
        elif req.instance_id is None:
            _check_epoch(member, req.member_epoch, owned)
    if member.state is MemberState.UNKNOWN and (owned is None or owned):
        raise HeartbeatError(ErrorCode.fenced_member_epoch, "The consumer group member is in a unknown state. "
                                                            "The member must abandon all its partitions and rejoin.")

    # ---- nothing can fail from here on: build and apply the records
    if existing is None:
        classic = state.groups.get(req.group_id)
        if classic is not None:  # an empty classic group gives way (its offsets stay)
            emit(state, fx, group_tombstone(req.group_id), now)
        group = appliers.get_or_create(state, req.group_id, now)
    else:
        group = existing
    if replaced is not None:
        replace_member(state, group, replaced, member, fx, now)

    updated = _copy(member)
    if req.instance_id is not None:
        updated.instance_id = req.instance_id
    if req.rack_id is not None:
        updated.rack_id = req.rack_id
    if req.rebalance_timeout_ms != -1:
        updated.rebalance_timeout_ms = req.rebalance_timeout_ms
    if req.server_assignor is not None:
        updated.server_assignor = req.server_assignor
    if req.subscribed_topic_names is not None:
        updated.subscribed_topic_names = tuple(sorted(set(req.subscribed_topic_names)))
    if req.subscribed_topic_regex is not None:
        updated.subscribed_topic_regex = req.subscribed_topic_regex  # "" means no regex (null: unchanged)
    updated.client_id, updated.client_host = req.client_id, req.client_host

    bump = False
    is_new = member_id not in group.members
    subscription_changed = (updated.subscribed_topic_names != member.subscribed_topic_names
                            or updated.subscribed_topic_regex != member.subscribed_topic_regex)
    if is_new or _metadata_differs(member, updated):
        emit(state, fx, records.member_subscription(group.group_id, updated), now)
        bump |= subscription_changed
    if is_new or subscription_changed:
        # The member's subscription record is applied already (a new member or a changed subscription
        # always writes one), so the group's members are the members after this heartbeat.
        metadata = group_subscription_metadata_cached(state, group, exact=True)
    else:  # the union of the group's subscriptions is what it was: no walk over every member
        metadata = group_subscription_metadata_cached(state, group)
    if metadata != group.subscription_metadata:
        bump = True
    group.subscription_metadata = metadata
    group_epoch = group.group_epoch
    if bump:
        group_epoch += 1
        emit(state, fx, records.group_epoch(group.group_id, group_epoch), now)
        state.log.info("bumped consumer group epoch", group_id=group.group_id, epoch=group_epoch)

    maybe_update_target_assignment(state, group, group_epoch, fx, now)
    updated = group.members[member_id]  # as replayed (the subscription record is applied already)
    before = _copy(updated)
    reconcile(state, group, updated, owned, fx, now, subscription_changed)
    after = group.members[member_id]

    schedule_session(state, group.group_id, member_id, now)
    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": member_id,
                "member_epoch": after.member_epoch, "heartbeat_interval": heartbeat_interval_ms(state, group.group_id, after),
                "assignment": None}
    full = req.member_epoch == 0 or (
        req.rebalance_timeout_ms != -1
        and (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
        and req.topic_partitions is not None
    )
    if full or member.assigned != after.assigned or before.assigned != after.assigned:
        response["assignment"] = {"topic_partitions": [
            {"topic_id": t, "partitions": sorted(ps)} for t, ps in sorted(after.assigned.items(), key=lambda kv: str(kv[0]))
        ]}
    return response


def heartbeat_interval_ms(state: ShardState, group_id: str, member: ConsumerMember) -> int:
    """The HeartbeatIntervalMs of a member's answer: the group's interval, or the shorter
    ``group.consumer.unreleased.heartbeat.interval.ms`` (ours; 0 = off, Kafka's answer) while the member waits
    only for partitions another member has not released yet (UNRELEASED_PARTITIONS).

    Why: such a member has its new epoch but not its new partitions, and the Java consumer does not come back
    for them before its heartbeat timer expires. Its membership manager reconciles only an assignment that
    differs from the current one (AbstractMembershipManager.processAssignmentReceived: ``if
    (!targetAssignmentReconciled()) transitionTo(MemberState.RECONCILING)``, else "Nothing to reconcile"), and
    only ACKNOWLEDGING, LEAVING and JOINING heartbeat without waiting (``shouldHeartbeatNow``). So it waited a
    whole interval after the owner's revocation (the kip848_java figure's lost second). But the client adopts
    every answer's interval: AbstractHeartbeatRequestManager.onResponse calls
    ``heartbeatRequestState.updateHeartbeatIntervalMs(heartbeatIntervalForResponse(response))``, and
    HeartbeatRequestState.updateHeartbeatIntervalMs, when the value changed, sets it and
    ``heartbeatTimer.updateAndReset(heartbeatIntervalMs)`` (from the answer; the timer is otherwise reset to
    the interval when a heartbeat is sent, makeHeartbeatRequest -> ``resetTimer()``). A short interval in the
    waiting member's answers brings its next heartbeat forward (not below the client's retry backoff since
    the last answer, retry.backoff.ms 100 ms +-20 %, which RequestState.canSendRequest also requires); the
    group's interval in the answer that gives it its partitions puts the timer back. Epochs, assignments and
    the revocation protocol stay Kafka's: only the wait is shorter (checked against Kafka 4.3.1's recorded
    answers in tests/conformance/test_unreleased_heartbeat_interval.py)."""
    configured = state.consumer_heartbeat_interval_ms(group_id)
    short = state.config.group_consumer_unreleased_heartbeat_interval_ms
    if short and member.state is MemberState.UNRELEASED_PARTITIONS:
        return min(short, configured)
    return configured


def _check_instance_not_fenced(static: ConsumerMember, req: ConsumerGroupHeartbeat) -> None:
    if static.member_id != req.member_id:
        raise HeartbeatError(
            ErrorCode.fenced_instance_id,
            f"Static member {req.member_id} with instance id {req.instance_id} was fenced by member {static.member_id}.",
        )


def replace_member(state: ShardState, group: ConsumerGroup, old: ConsumerMember, new: ConsumerMember, fx: Effects,
                   now: int) -> None:
    """Kafka's replaceMember: the old member's records go, the new one inherits its target and assignment."""
    gid = group.group_id
    target = group.target.get(old.member_id, {})
    emit(state, fx, records.current_assignment_tombstone(gid, old.member_id), now)
    emit(state, fx, records.target_assignment_tombstone(gid, old.member_id), now)
    emit(state, fx, records.member_subscription_tombstone(gid, old.member_id), now)
    emit(state, fx, records.member_subscription(gid, new), now)
    emit(state, fx, records.target_assignment(gid, new.member_id, target), now)
    emit(state, fx, records.current_assignment(gid, new), now)
    cancel_member_timers(state, gid, old.member_id)


# ---------------------------------------------------------------------------- leave


def leave(state: ShardState, req: ConsumerGroupHeartbeat, now: int, fx: Effects) -> dict:
    group = state.consumer_groups.get(req.group_id)
    if group is None:
        if (req.group_id in state.share_groups
                or req.group_id in state.groups and state.groups[req.group_id].state is not GroupState.DEAD):
            raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {req.group_id} is not a consumer group.")
        raise HeartbeatError(ErrorCode.group_id_not_found, f"Group {req.group_id} not found.")
    if req.instance_id is None:
        member = group.members.get(req.member_id)
        if member is None:
            raise HeartbeatError(ErrorCode.unknown_member_id,
                                 f"Member {req.member_id} is not a member of group {req.group_id}.")
    else:
        member = group.static_member(req.instance_id)
        if member is None:
            raise HeartbeatError(ErrorCode.unknown_member_id, f"Instance id {req.instance_id} is unknown.")
        _check_instance_not_fenced(member, req)
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # Kafka's consumerGroupStaticMemberGroupLeave: the member stays, at epoch -2, keeping its partitions
            # for the instance's next member until its session runs out.
            state.log.info("static member temporarily left the consumer group", group_id=group.group_id,
                           member_id=member.member_id, instance_id=req.instance_id)
            away = _copy(member)
            away.member_epoch, away.pending_revocation = LEAVE_GROUP_STATIC_MEMBER_EPOCH, {}
            emit(state, fx, records.current_assignment(group.group_id, away), now)
            return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": req.member_id,
                    "member_epoch": req.member_epoch, "heartbeat_interval": 0, "assignment": None}
    state.log.info("member left the consumer group", group_id=group.group_id, member_id=member.member_id)
    state.observer.on_member_left(group.group_id, member.member_id, "left the consumer group")
    fence_member(state, group, member, now, fx)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": req.member_id,
            "member_epoch": req.member_epoch, "heartbeat_interval": 0, "assignment": None}
