"""ListOffsets: the offset of a timestamp, or of the log's start or end (the last stable offset at read_committed)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.LIST_OFFSETS, 1, 10)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    topics = [(t.name, [(int(p.partition_index), int(p.timestamp)) for p in t.partitions])
              for t in request.topics]
    return await services.dataplane.list_offsets.list_offsets(topics, int(getattr(request, "isolation_level", 0)))
