"""ShareGroupDescribe and the share groups' rows of ListGroups, as Kafka 4.3 shows them."""

from __future__ import annotations

from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share.group import ASSIGNOR_NAME
from groupcoord.coordinator.groups.share.heartbeat import other_type
from groupcoord.coordinator.groups.share.member import Assignment
from groupcoord.coordinator.groups.share.topics import name_of
from groupcoord.protocol.errors import ErrorCode

GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)  # READ, DELETE, DESCRIBE (no authorizer)
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


def error_row(group_id: str, code: ErrorCode, message: str | None) -> dict:
    return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "", "group_epoch": 0,
            "assignment_epoch": 0, "assignor_name": "", "members": [], "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}


def _partitions(state: ShardState, assignment: Assignment) -> list[dict]:
    """Topics by id and name; a topic the catalog no longer knows is left out, as Kafka does."""
    out = []
    for topic_id, partitions in sorted(assignment.items(), key=lambda kv: str(kv[0])):
        name = name_of(state.topics, topic_id)
        if name is not None:
            out.append({"topic_id": topic_id, "topic_name": name, "partitions": sorted(partitions)})
    return out


def describe(state: ShardState, group_id: str, include_authorized_operations: bool = False) -> dict:
    unavailable = state.availability_error()
    if unavailable is not None:
        return error_row(group_id, unavailable, None)
    group = state.share_groups.get(group_id)
    if group is None:
        if other_type(state, group_id):
            return error_row(group_id, ErrorCode.group_id_not_found, f"Group {group_id} is not a share group.")
        return error_row(group_id, ErrorCode.group_id_not_found, f"Group {group_id} not found.")
    members = [{
        "member_id": m.member_id,
        "rack_id": m.rack_id,
        "member_epoch": m.member_epoch,
        "client_id": m.client_id,
        "client_host": m.client_host,
        "subscribed_topic_names": sorted(m.subscribed_topic_names),
        "assignment": {"topic_partitions": _partitions(state, m.assigned)},
    } for m in group.members.values()]
    return {
        "error_code": ErrorCode.none,
        "error_message": None,
        "group_id": group_id,
        "group_state": group.state.value,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": ASSIGNOR_NAME,
        "members": members,
        "authorized_operations": GROUP_AUTHORIZED_OPERATIONS if include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED,
    }

