"""IncrementalAlterConfigs: SET/DELETE/APPEND/SUBTRACT on topic, broker and group configs
(``kafka-configs --alter``, the admin client's ``incrementalAlterConfigs``)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..dataplane.config_changes import ops_from_request
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.INCREMENTAL_ALTER_CONFIGS, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    service = services.dataplane.config_changes
    responses = []
    for resource in request.resources:
        result = await service.incremental(int(resource.resource_type), resource.resource_name,
                                           ops_from_request(resource.configs), bool(request.validate_only))
        responses.append({"error_code": result.error, "error_message": result.message,
                          "resource_type": resource.resource_type, "resource_name": resource.resource_name})
    return {"throttle_time": 0, "responses": responses}
