"""DeleteGroups: remove empty groups and their offsets."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DELETE_GROUPS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    return {"throttle_time": 0, "results": await services.groups.delete_groups([as_str(g) for g in request.groups_names])}
