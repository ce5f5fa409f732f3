"""AlterConfigs (the legacy, non-incremental form): each resource's dynamic configs replaced as a whole."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..security.acl import CLUSTER_NAME, AclOperation, ResourceType

from ..server.dispatch import RequestContext
from .describe_configs import _ACL_TARGETS
from .api import Api
from .services import Services

API = Api(ApiKey.ALTER_CONFIGS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    service = services.dataplane.config_changes
    responses = []
    auth = services.authorizer
    for resource in request.resources:
        target = _ACL_TARGETS.get(int(resource.resource_type))
        if auth is not None and target is not None and not auth.authorize(
                ctx, AclOperation.ALTER_CONFIGS, target[0],
                CLUSTER_NAME if target[0] == ResourceType.CLUSTER else resource.resource_name):
            # KafkaApis: ALTER_CONFIGS on the topic, the group or (broker, broker logger) the cluster
            responses.append({"error_code": target[1], "error_message": None,
                              "resource_type": resource.resource_type, "resource_name": resource.resource_name})
            continue
        result = await service.replace(int(resource.resource_type), resource.resource_name,
                                       [(c.name, c.value) for c in resource.configs], bool(request.validate_only))
        responses.append({"error_code": result.error, "error_message": result.message,
                          "resource_type": resource.resource_type, "resource_name": resource.resource_name})
    return {"throttle_time": 0, "responses": responses}
