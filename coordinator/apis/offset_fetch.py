"""OffsetFetch: a group's committed positions; from v8 several groups in one request (KIP-709).

v10 names topics by id (KIP-848), which this coordinator does not serve; kio has no v0.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.values import as_str

from ..groups.requests import OffsetFetch
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
    service = services.groups
    require_stable = bool(getattr(request, "require_stable", False))
    if ctx.api_version >= MULTI_GROUP_VERSION:
        groups = [
            await service.fetch_offsets(OffsetFetch(
                as_str(g.group_id), _topics(g.topics), require_stable,
                getattr(g, "member_id", None), int(getattr(g, "member_epoch", -1)),
            ))
            for g in request.groups
        ]
        return {"throttle_time": 0, "groups": groups}
    result = await service.fetch_offsets(OffsetFetch(as_str(request.group_id), _topics(request.topics), require_stable))
    return {"throttle_time": 0, "topics": result["topics"], "error_code": result["error_code"]}
