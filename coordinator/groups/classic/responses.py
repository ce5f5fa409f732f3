"""The answers to JoinGroup and SyncGroup, successful or not, as Kafka shapes them."""

from __future__ import annotations

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.protocol.errors import ErrorCode

NO_ERROR = ErrorCode.none
"""``ErrorCode.none`` as a module global: an Enum class attribute is read through EnumType's lookup hook (~0.5 µs
on CPython 3.11), and every join and sync answer of a group forming reads it."""


def join_error(member_id: str, error: ErrorCode) -> dict:
    return {
        "throttle_time": 0,
        "error_code": error,
        "generation_id": -1,
        "protocol_type": None,
        "protocol_name": None,
        "leader": "",
        "skip_assignment": False,
        "member_id": member_id,
        "members": [],
    }


def join_result(group: ClassicGroup, member_id: str, *, as_leader: bool, leader: str | None = None, skip_assignment: bool = False) -> dict:
    return {
        "throttle_time": 0,
        "error_code": NO_ERROR,
        "generation_id": group.generation,
        "protocol_type": group.protocol_type,
        "protocol_name": group.protocol_name,
        "leader": leader if leader is not None else (group.leader_id or ""),
        "skip_assignment": skip_assignment,
        "member_id": member_id,
        "members": group.current_member_metadata() if as_leader else [],
    }


def sync_error(error: ErrorCode) -> dict:
    return {"throttle_time": 0, "error_code": error, "protocol_type": None, "protocol_name": None, "assignment": b""}


def sync_result(group: ClassicGroup, error: ErrorCode, assignment: bytes = b"") -> dict:
    if error != NO_ERROR:
        return sync_error(error)
    return {
        "throttle_time": 0,
        "error_code": error,
        "protocol_type": group.protocol_type,
        "protocol_name": group.protocol_name,
        "assignment": assignment,
    }
