"""DescribeProducers: the active producers of partitions, with their open transactions (KIP-664)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_PRODUCERS, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    topics = [(t.name, [int(p) for p in t.partition_indexes]) for t in request.topics]
    return await services.dataplane.describe_producers.describe(topics)
