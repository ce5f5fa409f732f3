"""InitProducerId: a producer id and epoch for an idempotent producer (or a bumped epoch for an existing one)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.INIT_PRODUCER_ID, 0, 5)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    return services.dataplane.init_producer_id(request.transactional_id, int(getattr(request, "producer_id", -1)),
                                               int(getattr(request, "producer_epoch", -1)))
