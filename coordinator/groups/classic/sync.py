"""SyncGroup: the leader's assignment is persisted and fanned out; followers wait for it."""

from __future__ import annotations

from functools import partial
from typing import Any

from groupcoord.coordinator.groups.classic import rebalance
from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.records import group_metadata_record
from groupcoord.coordinator.groups.classic.responses import NO_ERROR, sync_error, sync_result
from groupcoord.coordinator.groups.classic.state import COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE, STABLE
from groupcoord.coordinator.groups.classic.validation import member_group, validate_member
from groupcoord.coordinator.groups.requests import SyncGroup
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def handle_sync(state: ShardState, req: SyncGroup, token: Any, now: int) -> Effects:
    fx = Effects()
    if req.group_id in state.consumer_groups and not state.loading:
        from groupcoord.coordinator.groups.consumer import classic_apis as consumer_classic_apis  # such groups' own

        fx.reply(token, sync_error(consumer_classic_apis.SYNC_ERROR))
        return fx
    share_group = state.share_groups.get(req.group_id) if not state.loading else None
    if share_group is not None:  # Kafka's classicGroupSync on a share group: empty -> unknown member
        fx.reply(token, sync_error(ErrorCode.inconsistent_group_protocol if share_group.members
                                   else ErrorCode.unknown_member_id))
        return fx
    group = member_group(state, req.group_id)
    if isinstance(group, ErrorCode):
        fx.reply(token, sync_error(group))
        return fx
    error = _validate(group, req)
    if error is not None:
        fx.reply(token, sync_error(error))
        return fx
    group_state = group.state
    if group_state is EMPTY:
        fx.reply(token, sync_error(ErrorCode.unknown_member_id))
    elif group_state is PREPARING_REBALANCE:
        fx.reply(token, sync_error(ErrorCode.rebalance_in_progress))
    elif group_state is COMPLETING_REBALANCE:
        member = group.members[req.member_id]
        if member.is_awaiting_sync:
            fx.reply(member.sync_token, sync_error(ErrorCode.rebalance_in_progress))
        member.sync_token = token
        group.pending_sync.discard(req.member_id)
        if group.is_leader(req.member_id):
            _store_leader_assignment(state, group, req, now, fx)
    else:  # STABLE: a follower arriving after the leader still gets its assignment
        group.pending_sync.discard(req.member_id)
        member = group.members[req.member_id]
        fx.reply(token, sync_result(group, NO_ERROR, member.assignment))
        rebalance.schedule_heartbeat(state, group, member, now)
    return fx


def _validate(group: ClassicGroup, req: SyncGroup) -> ErrorCode | None:
    error = validate_member(group, req.member_id, req.group_instance_id)
    if error is not None:
        return error
    if req.generation_id != group.generation:
        return ErrorCode.illegal_generation
    if _inconsistent(req.protocol_type, group.protocol_type) or _inconsistent(req.protocol_name, group.protocol_name):
        return ErrorCode.inconsistent_group_protocol
    return None


def _store_leader_assignment(state: ShardState, group: ClassicGroup, req: SyncGroup, now: int, fx: Effects) -> None:
    given = dict(req.assignments)
    assignment = {member_id: given.get(member_id, b"") for member_id in group.members}  # missing members: empty
    if state.info_logged:
        state.log.info(
            "assignment received from leader",
            group_id=group.group_id,
            leader=req.member_id,
            generation=group.generation,
            members=group.size,
            static_members=len(group.static_members),
        )
    # Kafka's classicGroupSyncToLeader: the group stays CompletingRebalance until its record is durable; a member
    # joining meanwhile starts the next rebalance, and the members awaiting their assignment (the leader too) are
    # answered REBALANCE_IN_PROGRESS at once, rather than Stable now and told at their next Heartbeat.
    fx.write(*group_metadata_record(group, assignment))
    fx.after_write(partial(_assignment_stored, group.group_id, group.generation, req.member_id, assignment))


def _assignment_stored(group_id: str, generation: int, leader_id: str, assignment: dict[str, bytes],
                       state: ShardState, now: int, error: ErrorCode | None) -> Effects:
    """The leader's assignment is durable: if the group is still completing that generation's rebalance, every
    member takes its share, those awaiting it are answered, and the group is Stable (else a later event moved the
    group on, and it stays as that left it: Kafka does nothing either). Not durable within the write timeout
    (``error``): those awaiting it are answered with the error and the group rebalances, as Kafka does when the
    append fails."""
    fx = Effects()
    fx.at_once = True  # (the answers depend on the write just made durable, not on any later one)
    group = state.groups.get(group_id)
    if group is None or group.state is not COMPLETING_REBALANCE or group.generation != generation:
        return fx
    if error is not None:
        rebalance.reset_and_propagate_assignment_error(state, group, error, now, fx)
        rebalance.maybe_prepare_rebalance(
            state, group, f"error {error.name.upper()} when storing group assignment during SyncGroup (member: "
                          f"{leader_id})", now, fx)
        return fx
    for member_id, member in group.members.items():
        member.assignment = assignment.get(member_id, b"")
    rebalance.transition(state, group, STABLE, now,
                         f"leader {leader_id} sent the assignment for generation {generation}")
    rebalance.propagate_assignment(state, group, NO_ERROR, now, fx)
    return fx
