"""ListOffsets: the offset of a timestamp, or of the log's start or end (the last stable offset at read_committed)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.LIST_OFFSETS, 1, 10)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    topics = [(t.name, [(int(p.partition_index), int(p.timestamp)) for p in t.partitions])
              for t in request.topics]
    isolation = int(getattr(request, "isolation_level", 0))
    auth = services.authorizer
    if auth is None:
        return await services.dataplane.list_offsets.list_offsets(topics, isolation)
    # KafkaApis: DESCRIBE on each topic; the others' partitions TOPIC_AUTHORIZATION_FAILED, after the rest.
    allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, (name for name, _ in topics))
    response = await services.dataplane.list_offsets.list_offsets([t for t in topics if t[0] in allowed], isolation)
    denied = [{"name": name, "partitions": [{"partition_index": p, "error_code": ErrorCode.topic_authorization_failed,
                                             "timestamp": -1, "offset": -1, "leader_epoch": -1} for p, _ in parts]}
              for name, parts in topics if name not in allowed]
    return {**response, "topics": list(response["topics"]) + denied}
