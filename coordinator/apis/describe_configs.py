"""DescribeConfigs: topic and broker configs, with their sources and (optionally) synonyms."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.DESCRIBE_CONFIGS, 1, 4)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    resources = [(int(r.resource_type), r.resource_name,
                  None if r.configuration_keys is None or len(r.configuration_keys) == 0
                  else list(r.configuration_keys))
                 for r in request.resources]
    return services.dataplane.describe_configs.describe(resources, bool(getattr(request, "include_synonyms", False)))
