"""CreatePartitions: grow a topic to a new partition count."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..dataplane.topics import TopicResult
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .requests import duplicates
from .services import Services

API = Api(ApiKey.CREATE_PARTITIONS, 0, 3)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    dupes = duplicates(t.name for t in request.topics)
    auth = services.authorizer
    alterable = None
    if auth is not None:  # ControllerApis.createPartitions: ALTER on each topic
        alterable = auth.filter_authorized(ctx, AclOperation.ALTER, ResourceType.TOPIC,
                                           (t.name for t in request.topics if t.name not in dupes))
    results = []
    for topic in request.topics:
        if alterable is not None and topic.name not in dupes and topic.name not in alterable:
            result = TopicResult(topic.name, ErrorCode.topic_authorization_failed, None)
        elif topic.name in dupes:
            result = TopicResult(topic.name, ErrorCode.invalid_request, "Duplicate topic in request.")
        else:
            assignments = (None if topic.assignments is None
                           else [[int(b) for b in a.broker_ids] for a in topic.assignments])
            result = await services.dataplane.topics.create_partitions(topic.name, int(topic.count), assignments,
                                                                       bool(request.validate_only))
        results.append({"name": topic.name, "error_code": result.error, "error_message": result.message})
    return {"throttle_time": 0, "results": results}
