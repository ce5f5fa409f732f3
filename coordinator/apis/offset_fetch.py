"""OffsetFetch: a group's committed positions; from v8 several groups in one request (KIP-709).

v10 names topics by id (KIP-848), which this coordinator does not serve; kio has no v0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.lazy_requests import OffsetFetch
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.OFFSET_FETCH, 1, 9)

MULTI_GROUP_VERSION = 8


def _topics(topics: Any) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    if topics is None:
        return None
    return tuple((t.name, tuple(int(p) for p in t.partition_indexes)) for t in topics)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    require_stable = bool(getattr(request, "require_stable", False))
    if ctx.api_version >= MULTI_GROUP_VERSION:
        groups = [
            await _fetch(services, ctx, OffsetFetch(
                as_str(g.group_id), _topics(g.topics), require_stable,
                getattr(g, "member_id", None), int(getattr(g, "member_epoch", -1)),
            ))
            for g in request.groups
        ]
        return {"throttle_time": 0, "groups": groups}
    result = await _fetch(services, ctx, OffsetFetch(as_str(request.group_id), _topics(request.topics), require_stable))
    return {"throttle_time": 0, "topics": result["topics"], "error_code": result["error_code"]}


async def _fetch(services: Services, ctx: RequestContext, req: OffsetFetch) -> dict:
    """One group's answer. With an authorizer, as KafkaApis: DESCRIBE on the group (else only
    GROUP_AUTHORIZATION_FAILED); the topics asked for without DESCRIBE answer TOPIC_AUTHORIZATION_FAILED
    per partition and are not looked up; asked for all, the topics without DESCRIBE are left out."""
    auth = services.authorizer
    if auth is None:
        return await services.groups.fetch_offsets(req)
    if not auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, req.group_id):
        return {"group_id": req.group_id, "error_code": ErrorCode.group_authorization_failed, "topics": []}
    if req.topics is None:
        result = await services.groups.fetch_offsets(req)
        if result["error_code"] != ErrorCode.none:
            return result
        allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                         (t["name"] for t in result["topics"]))
        return {**result, "topics": [t for t in result["topics"] if t["name"] in allowed]}
    allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, (name for name, _ in req.topics))
    result = await services.groups.fetch_offsets(replace(req, topics=tuple(t for t in req.topics if t[0] in allowed)))
    if result["error_code"] != ErrorCode.none:
        return result
    denied = [{"name": name, "partitions": [{"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
                                             "metadata": "", "error_code": ErrorCode.topic_authorization_failed}
                                            for p in parts]}
              for name, parts in req.topics if name not in allowed]
    return {**result, "topics": list(result["topics"]) + denied}
