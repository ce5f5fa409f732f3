"""Wire handlers of the group APIs: kio request (any version) -> version-neutral request -> service -> dict.

The dispatcher turns the returned dict into the request version's kio response
class (protocol.build), so nothing here branches on versions except where Kafka's
semantics do (JoinGroup v0 rebalance timeout, FindCoordinator batching, OffsetFetch
multi-group, LeaveGroup batching).
"""

from __future__ import annotations

from typing import Any

from groupcoord.coordinator.groups.requests import (
    CommitPartition,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    LeavingMember,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    SyncGroup,
)
from groupcoord.coordinator.groups.requests import ConsumerGroupHeartbeat
from groupcoord.coordinator.groups.service import GroupCoordinatorService
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_ms as _ms

# api key -> (name, lowest, highest version served). OffsetCommit/OffsetFetch v10 name topics by id (KIP-848
# topic ids), which this coordinator does not serve; kio has no OffsetCommit v0-1 nor OffsetFetch v0.
API_VERSIONS: dict[int, tuple[str, int, int]] = {
    8: ("OffsetCommit", 2, 9),
    9: ("OffsetFetch", 1, 9),
    10: ("FindCoordinator", 0, 6),
    11: ("JoinGroup", 0, 9),
    12: ("Heartbeat", 0, 4),
    13: ("LeaveGroup", 0, 5),
    14: ("SyncGroup", 0, 5),
    15: ("DescribeGroups", 0, 6),
    16: ("ListGroups", 0, 5),
    42: ("DeleteGroups", 0, 2),
    47: ("OffsetDelete", 0, 0),
    68: ("ConsumerGroupHeartbeat", 0, 1),
    69: ("ConsumerGroupDescribe", 0, 1),
}

KEY_TYPE_GROUP = 0
FIND_COORDINATOR_BATCH_VERSION = 4
OFFSET_FETCH_MULTI_GROUP_VERSION = 8
JOIN_NULLABLE_PROTOCOL_VERSION = 7


def _str(value: Any) -> str:
    return "" if value is None else str(value)


# ---------------------------------------------------------------------------- request conversion


def join_request(ctx: Any, r: Any) -> JoinGroup:
    session = _ms(r.session_timeout)
    rebalance = _ms(getattr(r, "rebalance_timeout", session))
    if ctx.api_version == 0 or rebalance < 0:
        rebalance = session  # JoinGroup v0 has no rebalance timeout: Kafka uses the session timeout
    return JoinGroup(
        group_id=_str(r.group_id),
        member_id=_str(r.member_id),
        protocol_type=_str(r.protocol_type),
        protocols=tuple((p.name, bytes(p.metadata)) for p in r.protocols),
        session_timeout_ms=session,
        rebalance_timeout_ms=rebalance,
        group_instance_id=getattr(r, "group_instance_id", None),
        client_id=ctx.client_id or "",
        client_host="/" + ctx.client_host if ctx.client_host and not ctx.client_host.startswith("/") else (ctx.client_host or ""),
        reason=getattr(r, "reason", None),
        version=ctx.api_version,
    )


def sync_request(ctx: Any, r: Any) -> SyncGroup:
    return SyncGroup(
        group_id=_str(r.group_id),
        generation_id=int(r.generation_id),
        member_id=_str(r.member_id),
        assignments=tuple((a.member_id, bytes(a.assignment)) for a in r.assignments),
        group_instance_id=getattr(r, "group_instance_id", None),
        protocol_type=getattr(r, "protocol_type", None),
        protocol_name=getattr(r, "protocol_name", None),
        version=ctx.api_version,
    )


def leave_request(ctx: Any, r: Any) -> LeaveGroup:
    if hasattr(r, "members"):
        members = tuple(LeavingMember(_str(m.member_id), m.group_instance_id, getattr(m, "reason", None)) for m in r.members)
    else:
        members = (LeavingMember(_str(r.member_id)),)
    return LeaveGroup(_str(r.group_id), members, ctx.api_version)


def commit_request(ctx: Any, r: Any) -> OffsetCommit:
    retention = getattr(r, "retention_time", None)
    return OffsetCommit(
        group_id=_str(r.group_id),
        topics=tuple(
            (
                t.name,
                tuple(
                    CommitPartition(
                        int(p.partition_index),
                        int(p.committed_offset),
                        int(getattr(p, "committed_leader_epoch", -1)),
                        p.committed_metadata,
                    )
                    for p in t.partitions
                ),
            )
            for t in r.topics
        ),
        generation_id=int(r.generation_id_or_member_epoch),
        member_id=_str(r.member_id),
        group_instance_id=getattr(r, "group_instance_id", None),
        retention_time_ms=-1 if retention is None else _ms(retention),
        version=ctx.api_version,
    )


def _fetch_topics(topics: Any) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    if topics is None:
        return None
    return tuple((t.name, tuple(int(p) for p in t.partition_indexes)) for t in topics)


def consumer_heartbeat_request(ctx: Any, r: Any) -> ConsumerGroupHeartbeat:
    owned = r.topic_partitions
    names = r.subscribed_topic_names
    return ConsumerGroupHeartbeat(
        group_id=_str(r.group_id),
        member_id=_str(r.member_id),
        member_epoch=int(r.member_epoch),
        instance_id=r.instance_id,
        rack_id=r.rack_id,
        rebalance_timeout_ms=_ms(r.rebalance_timeout),
        subscribed_topic_names=None if names is None else tuple(str(n) for n in names),
        subscribed_topic_regex=getattr(r, "subscribed_topic_regex", None),
        server_assignor=r.server_assignor,
        topic_partitions=None if owned is None else tuple((tp.topic_id, tuple(int(p) for p in tp.partitions)) for tp in owned),
        client_id=ctx.client_id or "",
        client_host="/" + ctx.client_host if ctx.client_host and not ctx.client_host.startswith("/") else (ctx.client_host or ""),
        version=ctx.api_version,
    )


# ---------------------------------------------------------------------------- registration


def register(dispatcher: Any, service: GroupCoordinatorService) -> None:
    config = service.config

    async def find_coordinator(ctx: Any, r: Any) -> dict:
        key_type = int(getattr(r, "key_type", KEY_TYPE_GROUP))

        def answer(key: str) -> dict:
            if key_type != KEY_TYPE_GROUP:
                return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": ErrorCode.coordinator_not_available,
                        "error_message": "this broker only coordinates consumer groups"}
            return {"key": key, "node_id": config.node_id, "host": config.advertised_host, "port": config.advertised_port,
                    "error_code": ErrorCode.none, "error_message": None}

        if ctx.api_version >= FIND_COORDINATOR_BATCH_VERSION:
            return {"throttle_time": 0, "coordinators": [answer(k) for k in r.coordinator_keys]}
        single = answer(_str(r.key))
        del single["key"]
        return {"throttle_time": 0, **single}

    async def join_group(ctx: Any, r: Any) -> dict:
        response = await service.join_group(join_request(ctx, r))
        if ctx.api_version < JOIN_NULLABLE_PROTOCOL_VERSION and response["protocol_name"] is None:
            response = {**response, "protocol_name": ""}  # not nullable before v7: Kafka sends ""
        return response

    def sync_group(ctx: Any, r: Any) -> Any:
        return service.sync_group(sync_request(ctx, r))

    def heartbeat(ctx: Any, r: Any) -> Any:
        """Returns the reply future, usually already resolved: the server then answers inline."""
        req = Heartbeat(_str(r.group_id), int(r.generation_id), _str(r.member_id), getattr(r, "group_instance_id", None))
        return service.heartbeat(req)

    def leave_group(ctx: Any, r: Any) -> Any:
        return service.leave_group(leave_request(ctx, r))

    def offset_commit(ctx: Any, r: Any) -> Any:
        return service.commit_offsets(commit_request(ctx, r))

    async def offset_fetch(ctx: Any, r: Any) -> dict:
        require_stable = bool(getattr(r, "require_stable", False))
        if ctx.api_version >= OFFSET_FETCH_MULTI_GROUP_VERSION:
            groups = [
                await service.fetch_offsets(OffsetFetch(
                    _str(g.group_id), _fetch_topics(g.topics), require_stable,
                    getattr(g, "member_id", None), int(getattr(g, "member_epoch", -1)),
                ))
                for g in r.groups
            ]
            return {"throttle_time": 0, "groups": groups}
        result = await service.fetch_offsets(OffsetFetch(_str(r.group_id), _fetch_topics(r.topics), require_stable))
        return {"throttle_time": 0, "topics": result["topics"], "error_code": result["error_code"]}

    async def describe_groups(ctx: Any, r: Any) -> dict:
        groups = await service.describe_groups(
            [_str(g) for g in r.groups],
            include_authorized_operations=bool(getattr(r, "include_authorized_operations", False)),
            version=ctx.api_version,
        )
        return {"throttle_time": 0, "groups": groups}

    async def list_groups(ctx: Any, r: Any) -> dict:
        error, groups = service.list_groups(tuple(getattr(r, "states_filter", ()) or ()), tuple(getattr(r, "types_filter", ()) or ()))
        return {"throttle_time": 0, "error_code": error, "groups": groups}

    async def delete_groups(ctx: Any, r: Any) -> dict:
        return {"throttle_time": 0, "results": await service.delete_groups([_str(g) for g in r.groups_names])}

    async def offset_delete(ctx: Any, r: Any) -> dict:
        topics = tuple((t.name, tuple(int(p.partition_index) for p in t.partitions)) for t in r.topics)
        return await service.delete_offsets(OffsetDelete(_str(r.group_id), topics))

    def consumer_group_heartbeat(ctx: Any, r: Any) -> Any:
        return service.consumer_group_heartbeat(consumer_heartbeat_request(ctx, r))

    async def consumer_group_describe(ctx: Any, r: Any) -> dict:
        groups = await service.describe_consumer_groups([_str(g) for g in r.group_ids], bool(r.include_authorized_operations))
        return {"throttle_time": 0, "groups": groups}

    handlers = {
        68: consumer_group_heartbeat,
        69: consumer_group_describe,
        8: offset_commit,
        9: offset_fetch,
        10: find_coordinator,
        11: join_group,
        12: heartbeat,
        13: leave_group,
        14: sync_group,
        15: describe_groups,
        16: list_groups,
        42: delete_groups,
        47: offset_delete,
    }
    for api_key, handler in handlers.items():
        _, low, high = API_VERSIONS[api_key]
        dispatcher.register(api_key, handler, low, high)
