"""AlterConfigs (the legacy, non-incremental form): each resource's dynamic configs replaced as a whole."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.ALTER_CONFIGS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    service = services.dataplane.config_changes
    responses = []
    for resource in request.resources:
        result = await service.replace(int(resource.resource_type), resource.resource_name,
                                       [(c.name, c.value) for c in resource.configs], bool(request.validate_only))
        responses.append({"error_code": result.error, "error_message": result.message,
                          "resource_type": resource.resource_type, "resource_name": resource.resource_name})
    return {"throttle_time": 0, "responses": responses}
