"""ConsumerGroupDescribe and the consumer groups' rows of ListGroups, as Kafka 4.x shows them."""

from __future__ import annotations

from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.consumer.group import ConsumerGroupState
from groupcoord.coordinator.groups.consumer.member import Assignment
from groupcoord.coordinator.groups.consumer.subscriptions import preferred_assignor
from groupcoord.coordinator.groups.consumer.topics import name_of
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)  # READ, DELETE, DESCRIBE (no authorizer)
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
MEMBER_TYPE_CONSUMER = 1  # ConsumerGroupDescribe v1 MemberType: 0 classic, 1 consumer


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


def _union(a: Assignment, b: Assignment) -> Assignment:
    return {t: a.get(t, frozenset()) | b.get(t, frozenset()) for t in set(a) | set(b)}


def describe(state: ShardState, group_id: str, include_authorized_operations: bool = False) -> dict:
    if state.loading:
        return error_row(group_id, ErrorCode.coordinator_load_in_progress, None)
    group = state.consumer_groups.get(group_id)
    if group is None:
        classic = state.groups.get(group_id)
        if classic is not None and classic.state is not GroupState.DEAD or group_id in state.share_groups:
            return error_row(group_id, ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group.")
        return error_row(group_id, ErrorCode.group_id_not_found, f"Group {group_id} not found.")
    members = []
    for m in group.members.values():
        members.append({
            "member_id": m.member_id,
            "instance_id": m.instance_id,
            "rack_id": m.rack_id,
            "member_epoch": m.member_epoch,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "subscribed_topic_names": list(m.subscribed_topic_names),
            "subscribed_topic_regex": m.subscribed_topic_regex,
            # What the member holds: Kafka 4.3.1 shows partitions still pending revocation as part of it.
            "assignment": {"topic_partitions": _partitions(state, _union(m.assigned, m.pending_revocation))},
            "target_assignment": {"topic_partitions": _partitions(state, group.target.get(m.member_id, {}))},
            "member_type": MEMBER_TYPE_CONSUMER,
        })
    return {
        "error_code": ErrorCode.none,
        "error_message": None,
        "group_id": group_id,
        "group_state": group.state.value,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": preferred_assignor(state, group.members),
        "members": members,
        "authorized_operations": GROUP_AUTHORIZED_OPERATIONS if include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED,
    }



__all__ = ["describe", "ConsumerGroupState"]
