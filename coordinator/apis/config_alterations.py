"""What AlterConfigs and IncrementalAlterConfigs share: which ACL a config resource is checked on, and the
per-resource loop (check ALTER_CONFIGS, apply, answer) around the one call in which the two APIs differ."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from groupcoord.protocol.errors import ErrorCode

from ..security.acl import CLUSTER_NAME, AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .services import Services

# ConfigResource.Type → what DESCRIBE_CONFIGS / ALTER_CONFIGS is checked on, and the error a refusal answers.
ACL_TARGETS = {
    2: (ResourceType.TOPIC, ErrorCode.topic_authorization_failed),
    4: (ResourceType.CLUSTER, ErrorCode.cluster_authorization_failed),        # BROKER
    8: (ResourceType.CLUSTER, ErrorCode.cluster_authorization_failed),        # BROKER_LOGGER
    16: (ResourceType.CLUSTER, ErrorCode.cluster_authorization_failed),       # CLIENT_METRICS
    32: (ResourceType.GROUP, ErrorCode.group_authorization_failed),           # GROUP
}

# (config changes service, resource, validate_only) → the service's result (``error``, ``message``)
Apply = Callable[[Any, Any, bool], Awaitable[Any]]


async def alter_each(services: Services, ctx: RequestContext, request: Any, apply: Apply) -> dict:
    """Answer an AlterConfigs-shaped request: one response per resource, in request order."""
    service = services.dataplane.config_changes
    responses = []
    auth = services.authorizer
    for resource in request.resources:
        target = ACL_TARGETS.get(int(resource.resource_type))
        if auth is not None and target is not None and not auth.authorize(
                ctx, AclOperation.ALTER_CONFIGS, target[0],
                CLUSTER_NAME if target[0] == ResourceType.CLUSTER else resource.resource_name):
            # KafkaApis: ALTER_CONFIGS on the topic, the group or (broker, broker logger) the cluster
            responses.append({"error_code": target[1], "error_message": None,
                              "resource_type": resource.resource_type, "resource_name": resource.resource_name})
            continue
        result = await apply(service, resource, bool(request.validate_only))
        responses.append({"error_code": result.error, "error_message": result.message,
                          "resource_type": resource.resource_type, "resource_name": resource.resource_name})
    return {"throttle_time": 0, "responses": responses}
