"""IncrementalAlterConfigs: SET/DELETE/APPEND/SUBTRACT on topic, broker and group configs
(``kafka-configs --alter``, the admin client's ``incrementalAlterConfigs``)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..dataplane.config_changes import ops_from_request
from ..server.dispatch import RequestContext
from .api import Api
from .config_alterations import alter_each
from .services import Services

API = Api(ApiKey.INCREMENTAL_ALTER_CONFIGS, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    return await alter_each(services, ctx, request, _incremental)


def _incremental(service: Any, resource: Any, validate_only: bool):
    return service.incremental(int(resource.resource_type), resource.resource_name,
                               ops_from_request(resource.configs), validate_only)
