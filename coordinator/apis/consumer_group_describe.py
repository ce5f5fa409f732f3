"""ConsumerGroupDescribe: members, assignments and epochs of KIP-848 consumer groups."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    groups = await services.groups.describe_consumer_groups([as_str(g) for g in request.group_ids],
                                                            bool(request.include_authorized_operations))
    return {"throttle_time": 0, "groups": groups}
