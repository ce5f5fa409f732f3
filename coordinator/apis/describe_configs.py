"""DescribeConfigs: topic and broker configs, with their sources and (optionally) synonyms."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..security.acl import CLUSTER_NAME, AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .authz import DEFAULT_MESSAGES
from .config_alterations import ACL_TARGETS
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.DESCRIBE_CONFIGS, 1, 4)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    resources = [(int(r.resource_type), r.resource_name,
                  None if r.configuration_keys is None or len(r.configuration_keys) == 0
                  else list(r.configuration_keys))
                 for r in request.resources]
    synonyms = bool(getattr(request, "include_synonyms", False))
    auth = services.authorizer
    if auth is None:
        return services.dataplane.describe_configs.describe(resources, synonyms)
    # ConfigHelper: DESCRIBE_CONFIGS on the cluster (broker, broker logger, client metrics), the topic or
    # the group; the refused ones answer their type's authorisation error after the others.
    allowed, refused = [], []
    for r in resources:
        rtype, name = r[0], r[1]
        target = ACL_TARGETS.get(rtype)
        if target is None:
            allowed.append(r)   # the describe answers an unknown type itself
            continue
        acl_type, error = target
        if auth.authorize(ctx, AclOperation.DESCRIBE_CONFIGS, acl_type, CLUSTER_NAME if acl_type == ResourceType.CLUSTER else name):
            allowed.append(r)
        else:
            refused.append({"error_code": error, "error_message": DEFAULT_MESSAGES[error], "resource_type": rtype,
                            "resource_name": name, "configs": []})
    response = services.dataplane.describe_configs.describe(allowed, synonyms) if allowed else {"throttle_time": 0, "results": []}
    return {**response, "results": list(response["results"]) + refused}

