"""DescribeGroups: state, protocol and members of classic (and consumer) groups."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_GROUPS, 0, 6)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    groups = await services.groups.describe_groups(
        [as_str(g) for g in request.groups],
        include_authorized_operations=bool(getattr(request, "include_authorized_operations", False)),
        version=ctx.api_version,
    )
    return {"throttle_time": 0, "groups": groups}
