"""AlterConfigs (the legacy, non-incremental form): each resource's dynamic configs replaced as a whole."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .config_alterations import alter_each
from .services import Services

API = Api(ApiKey.ALTER_CONFIGS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    return await alter_each(services, ctx, request, _replace)


def _replace(service: Any, resource: Any, validate_only: bool):
    return service.replace(int(resource.resource_type), resource.resource_name,
                           [(c.name, c.value) for c in resource.configs], validate_only)
