"""JoinGroup: admission checks, new/known/static members, and parking until the join phase completes."""

from __future__ import annotations

from typing import Any

from groupcoord.coordinator.groups.classic import rebalance
from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.member import ClassicMember
from groupcoord.coordinator.groups.classic.records import group_metadata_record
from groupcoord.coordinator.groups.classic.shared_sets import protocol_names
from groupcoord.coordinator.groups.classic.responses import join_error, join_result, sync_result
from groupcoord.coordinator.groups.classic.state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE
from groupcoord.coordinator.groups.requests import JoinGroup
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode


def handle_join(state: ShardState, req: JoinGroup, token: Any, now: int) -> Effects:
    """Its replies are given inside the operation (``at_once``), as Kafka's classicGroupJoin completes its
    response future: MEMBER_ID_REQUIRED, the errors and the join results of a completed join phase do not
    wait for another group's pending write. One that writes (a static member's new id, a converted consumer
    group) still answers once its records are durable."""
    fx = Effects()
    fx.at_once = True
    error = _validate(state, req)
    if error is not None:
        fx.reply(token, join_error(req.member_id, error))
        return fx
    if req.group_id in state.share_groups:  # Kafka's classicGroupJoin: the id belongs to a share group
        fx.reply(token, join_error("", ErrorCode.inconsistent_group_protocol))
        return fx
    is_unknown = req.member_id == ""
    consumer_group = state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        from groupcoord.coordinator.groups.consumer import classic_apis as consumer_classic_apis  # such groups' own

        if consumer_group.members or not is_unknown:
            fx.reply(token, join_error(req.member_id, consumer_classic_apis.JOIN_NON_EMPTY_ERROR))
            return fx
        consumer_classic_apis.convert_empty_to_classic(state, consumer_group, now, fx)
    group = state.groups.get(req.group_id)
    if group is None:
        if not is_unknown:
            fx.reply(token, join_error(req.member_id, ErrorCode.unknown_member_id))
            return fx
        group = state.create_group(req.group_id, now)
    if not _accept_joining_member(state, group, req.member_id):
        # Over capacity: the member (even a known one) is dropped, so the last rejoiners are the ones kicked out.
        member = group.members.get(req.member_id)
        if member is not None:
            rebalance.remove_member_and_update_group(state, group, member, "group is over its maximum size", now, fx)
        group.pending_members.discard(req.member_id)
        fx.reply(token, join_error("", ErrorCode.group_max_size_reached))
    elif is_unknown:
        _join_new_member(state, group, req, token, now, fx)
    else:
        _join_existing_member(state, group, req, token, now, fx)
    rebalance.try_complete_join(state, group, now, fx)
    return fx


def _validate(state: ShardState, req: JoinGroup) -> ErrorCode | None:
    error = state.request_error(req.group_id)
    if error is not None:
        return error
    cfg = state.config
    if not cfg.group_min_session_timeout_ms <= req.session_timeout_ms <= cfg.group_max_session_timeout_ms:
        return ErrorCode.invalid_session_timeout
    return None


def _accept_joining_member(state: ShardState, group: ClassicGroup, member_id: str) -> bool:
    max_size = state.config.group_max_size
    if group.state in (EMPTY, DEAD):
        return True
    if group.state is PREPARING_REBALANCE:
        member = group.members.get(member_id)
        return (member is not None and member.is_awaiting_join) or group.awaiting_join < max_size
    return member_id in group.members or group.size < max_size


def _join_new_member(state: ShardState, group: ClassicGroup, req: JoinGroup, token: Any, now: int, fx: Effects) -> None:
    if group.state is DEAD:
        fx.reply(token, join_error("", ErrorCode.coordinator_not_available))
        return
    names = protocol_names(req.protocols)
    if not group.supports(req.protocol_type, names):
        fx.reply(token, join_error("", ErrorCode.inconsistent_group_protocol))
        return
    new_id = state.new_member_id(req.group_instance_id or req.client_id)
    if req.group_instance_id is not None:
        old_id = group.static_member_id(req.group_instance_id)
        if old_id is not None:
            _replace_static_member(state, group, req, old_id, new_id, token, now, fx)
            return
    elif req.requires_known_member_id:
        group.pending_members.add(new_id)
        rebalance.schedule_pending_member(state, group, new_id, now + req.session_timeout_ms)
        fx.reply(token, join_error(new_id, ErrorCode.member_id_required))
        return
    _add_member_and_rebalance(state, group, req, new_id, token, now, fx)


def _add_member_and_rebalance(state: ShardState, group: ClassicGroup, req: JoinGroup, member_id: str, token: Any, now: int, fx: Effects) -> None:
    # Positional up to the protocols (a class called with keywords is handed a dict of them), then the two
    # fields that differ from their defaults.
    member = ClassicMember(member_id, req.group_instance_id, req.client_id, req.client_host, req.rebalance_timeout_ms,
                           req.session_timeout_ms, req.protocol_type, req.protocols)
    member.is_new = True
    member.joined_at_ms = now
    if group.state is PREPARING_REBALANCE and group.join_kind == rebalance.INITIAL_JOIN:
        # Kafka 4 (GroupMetadataManager): a member added while the rebalance that started from Empty runs extends the
        # initial delay, at any generation (the old Scala coordinator's test was generation 0).
        group.new_member_added = True
    group.add(member, token, req.version)
    state.log_member(group, member_id, "joined", req.reason or "new member")
    # A pending member's deadline to rejoin is its heartbeat key's (rebalance.HEARTBEAT): moved, not cancelled.
    rebalance.schedule_heartbeat(state, group, member, now)
    rebalance.maybe_prepare_rebalance(state, group, _reason(f"adding new member {member_id}", req), now, fx)


def _replace_static_member(state: ShardState, group: ClassicGroup, req: JoinGroup, old_id: str, new_id: str, token: Any, now: int, fx: Effects) -> None:
    """KIP-345: a known instance restarting with a fresh member id takes over its old slot."""
    old_leader = group.leader_id
    member = group.members[old_id]
    # The old incarnation's parked requests belong to a fenced process now.
    if member.is_awaiting_join:
        fx.reply(member.join_token, join_error(old_id, ErrorCode.fenced_instance_id))
        group.set_join_token(member, None)
    if member.is_awaiting_sync:
        fx.reply(member.sync_token, sync_result(group, ErrorCode.fenced_instance_id))
        member.sync_token = None
    rebalance.cancel_heartbeat(state, group, old_id)
    group.replace_static_member(req.group_instance_id, old_id, new_id)
    state.log_member(group, new_id, "joined", f"static instance {req.group_instance_id} replaced member {old_id}")
    member.client_id, member.client_host = req.client_id, req.client_host
    protocols_changed = not member.matches(req.protocols)
    group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms)
    rebalance.schedule_heartbeat(state, group, member, now)
    if group.state is STABLE:
        if not protocols_changed or group.select_protocol() == group.protocol_name:
            # Nothing the assignment depends on changed: persist the new member id and answer without a rebalance.
            is_leader = group.is_leader(new_id)
            fx.write(*group_metadata_record(group))
            if req.version >= 9:
                response = join_result(group, new_id, as_leader=is_leader, skip_assignment=is_leader)
            else:
                # Before v9 a rejoining static leader is told the *old* leader id, so it acts as a follower
                # and does not compute a new assignment (KIP-345; v9's skip_assignment replaced this trick).
                response = join_result(group, new_id, as_leader=is_leader, leader=old_leader or "")
            fx.reply(token, response)
            return
        group.set_join_token(member, token, req.version)
        rebalance.maybe_prepare_rebalance(state, group, _reason(f"static member {new_id} rejoined with a change of protocol", req), now, fx)
    elif group.state is COMPLETING_REBALANCE:
        # The leader may already be assigning to the old id; only a new rebalance keeps ids and assignment consistent.
        group.set_join_token(member, token, req.version)
        rebalance.prepare_rebalance(state, group, _reason(f"updating metadata for static member {new_id}", req), now, fx)
    else:  # PREPARING_REBALANCE: just wait for the join phase with the others
        group.set_join_token(member, token, req.version)


def _join_existing_member(state: ShardState, group: ClassicGroup, req: JoinGroup, token: Any, now: int, fx: Effects) -> None:
    if group.state is DEAD:
        fx.reply(token, join_error(req.member_id, ErrorCode.coordinator_not_available))
        return
    names = protocol_names(req.protocols)
    if not group.supports(req.protocol_type, names):
        fx.reply(token, join_error(req.member_id, ErrorCode.inconsistent_group_protocol))
        return
    if req.member_id in group.pending_members:
        _add_member_and_rebalance(state, group, req, req.member_id, token, now, fx)
        return
    if group.is_static_member_fenced(req.group_instance_id, req.member_id):
        fx.reply(token, join_error(req.member_id, ErrorCode.fenced_instance_id))
        return
    unknown_instance = req.group_instance_id is not None and group.static_member_id(req.group_instance_id) is None
    if req.member_id not in group.members or unknown_instance:
        fx.reply(token, join_error(req.member_id, ErrorCode.unknown_member_id))
        return
    member = group.members[req.member_id]
    group_state = group.state
    if group_state is PREPARING_REBALANCE:
        _update_member_and_rebalance(state, group, member, req, token, now, fx, f"member {member.member_id} joining group during {group_state.value}")
    elif group_state is COMPLETING_REBALANCE:
        if member.matches(req.protocols):
            # Same metadata (it probably missed the JoinGroup response): hand back the current generation.
            fx.reply(token, join_result(group, member.member_id, as_leader=group.is_leader(member.member_id)))
        else:
            _update_member_and_rebalance(state, group, member, req, token, now, fx, f"updating metadata for member {member.member_id} during {group_state.value}")
    elif group_state is STABLE:
        if group.is_leader(member.member_id):
            # A leader rejoining forces a rebalance: that is how it reacts to changes outside member metadata.
            _update_member_and_rebalance(state, group, member, req, token, now, fx, f"leader {member.member_id} re-joining group during Stable")
        elif not member.matches(req.protocols):
            _update_member_and_rebalance(state, group, member, req, token, now, fx, f"updating metadata for member {member.member_id} during Stable")
        else:
            fx.reply(token, join_result(group, member.member_id, as_leader=False))
    else:  # EMPTY: no members can exist; let the client reset and rejoin
        fx.reply(token, join_error(req.member_id, ErrorCode.unknown_member_id))


def _update_member_and_rebalance(state: ShardState, group: ClassicGroup, member: ClassicMember, req: JoinGroup, token: Any, now: int, fx: Effects, reason: str) -> None:
    if member.is_awaiting_join:
        # A second JoinGroup for the same member supersedes the parked one (its connection is likely gone).
        fx.reply(member.join_token, join_error(member.member_id, ErrorCode.rebalance_in_progress))
    group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms)
    member.client_id, member.client_host = req.client_id or member.client_id, req.client_host or member.client_host
    group.set_join_token(member, token, req.version)
    rebalance.maybe_prepare_rebalance(state, group, _reason(reason, req), now, fx)


def _reason(text: str, req: JoinGroup) -> str:
    return f"{text}; client reason: {req.reason}" if req.reason else text
