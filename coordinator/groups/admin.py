"""DescribeGroups, ListGroups and DeleteGroups over the three group types: what operators see and remove."""

from __future__ import annotations

from typing import Any

from groupcoord.coordinator.groups.classic import deletion as classic_deletion
from groupcoord.coordinator.groups.classic.state import GroupState, parse_state
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import CONSUMER_GROUP_TYPE, CONSUMER_PROTOCOL_TYPE, SHARE_GROUP_TYPE, SHARE_PROTOCOL_TYPE

CLASSIC_GROUP_TYPE = "classic"
# Without an authorizer every principal may READ, DELETE and DESCRIBE a group (AclOperation codes 3, 6, 8).
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
GROUP_ID_NOT_FOUND_DESCRIBE_VERSION = 6  # KIP-1043: v6+ say GROUP_ID_NOT_FOUND for an unknown group


def described_error(group_id: str, error: ErrorCode, authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED) -> dict:
    """A DescribeGroups entry carrying only an error (and the empty fields Kafka sends with it)."""
    return {
        "error_code": error,
        "error_message": None,
        "group_id": group_id,
        "group_state": "",
        "protocol_type": "",
        "protocol_data": "",
        "members": [],
        "authorized_operations": authorized_operations,
    }


def describe_group(state: ShardState, group_id: str, *, include_authorized_operations: bool = False, version: int = 5) -> dict:
    ops = GROUP_AUTHORIZED_OPERATIONS if include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    unavailable = state.availability_error()
    if unavailable is not None:
        return described_error(group_id, unavailable, ops)
    out = described_error(group_id, ErrorCode.none, ops)
    if group_id in state.consumer_groups or group_id in state.share_groups:
        # Kafka's classicGroup lookup refuses other group types; before v6 that shows as a Dead group.
        out["group_state"] = GroupState.DEAD.value
        if version >= GROUP_ID_NOT_FOUND_DESCRIBE_VERSION:
            out["error_code"] = ErrorCode.group_id_not_found
            out["error_message"] = f"Group {group_id} is not a classic group."
        return out
    group = state.groups.get(group_id)
    if group is None or group.state is GroupState.DEAD:
        out["group_state"] = GroupState.DEAD.value
        if version >= GROUP_ID_NOT_FOUND_DESCRIBE_VERSION:
            out["error_code"] = ErrorCode.group_id_not_found
            out["error_message"] = f"Group {group_id} not found."
        return out
    stable = group.state is GroupState.STABLE
    out["group_state"] = group.state.value
    out["protocol_type"] = group.protocol_type or ""
    # Kafka shows the protocol and each member's metadata/assignment only once the group is Stable.
    out["protocol_data"] = (group.protocol_name or "") if stable else ""
    out["members"] = [
        {
            "member_id": m.member_id,
            "group_instance_id": m.group_instance_id,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "member_metadata": m.metadata(group.protocol_name) if stable else b"",
            "member_assignment": m.assignment if stable else b"",
        }
        for m in group.members.values()
    ]
    return out


def list_groups(state: ShardState, states_filter: tuple[str, ...] = (), types_filter: tuple[str, ...] = ()) -> tuple[ErrorCode, list[dict]]:
    if state.unavailable is not None:
        return ErrorCode.none, []  # a partition that failed to load is not this coordinator's, as in Kafka
    if state.loading:
        return ErrorCode.coordinator_load_in_progress, []
    states = {parse_state(s) for s in states_filter}
    types = {t.lower() for t in types_filter}
    listed = []
    if not types or CONSUMER_GROUP_TYPE in types:
        listed.extend(_listed(state.consumer_groups.values(), states_filter, CONSUMER_PROTOCOL_TYPE, CONSUMER_GROUP_TYPE))
    if not types or SHARE_GROUP_TYPE in types:
        listed.extend(_listed(state.share_groups.values(), states_filter, SHARE_PROTOCOL_TYPE, SHARE_GROUP_TYPE))
    if types and CLASSIC_GROUP_TYPE not in types:
        return ErrorCode.none, listed
    for group in state.groups.values():
        if group.state is GroupState.DEAD or (states and group.state not in states):
            continue
        listed.append(
            {
                "group_id": group.group_id,
                "protocol_type": group.protocol_type or "",
                "group_state": group.state.value,
                "group_type": CLASSIC_GROUP_TYPE,
            }
        )
    return ErrorCode.none, listed


def _listed(groups: Any, states_filter: tuple[str, ...], protocol_type: str, group_type: str) -> list[dict]:
    """ListGroups rows for consumer or share groups, whose protocol type is fixed by their kind; the states filter
    compares their state names case-insensitively, like Kafka (list_groups parses the filter for classic groups instead)."""
    states = {s.lower() for s in states_filter}
    rows = []
    for group in groups:
        group_state = group.state.value  # computed from the members for consumer groups: read it once
        if not states or group_state.lower() in states:
            rows.append({"group_id": group.group_id, "protocol_type": protocol_type, "group_state": group_state,
                         "group_type": group_type})
    return rows


def handle_delete_group(state: ShardState, group_id: str, token: Any, now: int) -> Effects:
    fx = Effects()
    group = state.groups.get(group_id)
    consumer_group = state.consumer_groups.get(group_id)
    share_group = state.share_groups.get(group_id)
    if state.availability_error() is not None:
        error = state.availability_error()
    elif share_group is not None:
        from groupcoord.coordinator.groups.share import deletion as share_deletion  # with the first share group

        error = ErrorCode.non_empty_group if share_group.members else ErrorCode.none
        if error == ErrorCode.none:
            share_deletion.delete_group(state, share_group, now, fx)
    elif consumer_group is not None:
        from groupcoord.coordinator.groups.consumer import deletion as consumer_deletion  # with the first such group

        error = consumer_deletion.delete_error(consumer_group) or ErrorCode.none
        if error == ErrorCode.none:
            consumer_deletion.delete_group(state, consumer_group, now, fx)
    elif group is None or group.state is GroupState.DEAD:
        error = ErrorCode.group_id_not_found
    elif group.state is not GroupState.EMPTY:
        error = ErrorCode.non_empty_group
    else:
        classic_deletion.delete_group(state, group, "deleted by DeleteGroups", now, fx)
        error = ErrorCode.none
    fx.reply(token, {"group_id": group_id, "error_code": error})
    return fx
