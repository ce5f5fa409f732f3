"""DeleteRecords: each partition's log start offset moved to the offset asked for (-1: the high watermark)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..dataplane.delete_records import NO_LOW_WATERMARK
from ..security.acl import AclOperation, ResourceType

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DELETE_RECORDS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    service = services.dataplane.delete_records
    auth = services.authorizer
    deletable = None
    if auth is not None:  # KafkaApis.handleDeleteRecordsRequest: DELETE on each topic
        deletable = auth.filter_authorized(ctx, AclOperation.DELETE, ResourceType.TOPIC,
                                           (t.name for t in request.topics))
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            index = int(part.partition_index)
            if deletable is not None and topic.name not in deletable:
                partitions.append({"partition_index": index, "low_watermark": NO_LOW_WATERMARK,
                                   "error_code": ErrorCode.topic_authorization_failed})
                continue
            result = await service.delete(topic.name, index, int(part.offset))
            partitions.append({"partition_index": index, "low_watermark": result.low_watermark,
                               "error_code": result.error})
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time": 0, "topics": topics}
