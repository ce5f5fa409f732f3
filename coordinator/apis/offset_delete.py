"""OffsetDelete: drop a group's committed offsets for partitions it no longer consumes."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.values import as_str

from ..groups.requests import OffsetDelete
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.OFFSET_DELETE, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    topics = tuple((t.name, tuple(int(p.partition_index) for p in t.partitions)) for t in request.topics)
    return await services.groups.delete_offsets(OffsetDelete(as_str(request.group_id), topics))
