"""ListGroups: every group, filtered by state (v4+) and type (v5+)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.LIST_GROUPS, 0, 5)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    error, groups = services.groups.list_groups(tuple(getattr(request, "states_filter", ()) or ()),
                                                tuple(getattr(request, "types_filter", ()) or ()))
    return {"throttle_time": 0, "error_code": error, "groups": groups}
