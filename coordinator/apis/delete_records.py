"""DeleteRecords: each partition's log start offset moved to the offset asked for (-1: the high watermark)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DELETE_RECORDS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    service = services.dataplane.delete_records
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            index = int(part.partition_index)
            result = await service.delete(topic.name, index, int(part.offset))
            partitions.append({"partition_index": index, "low_watermark": result.low_watermark,
                               "error_code": result.error})
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time": 0, "topics": topics}
