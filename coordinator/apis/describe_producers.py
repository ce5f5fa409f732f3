"""DescribeProducers: the active producers of partitions, with their open transactions (KIP-664)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..dataplane.names import topic_name_error
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .authz import TOPIC_DENIED
from .services import Services

API = Api(ApiKey.DESCRIBE_PRODUCERS, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    topics = [(t.name, [int(p) for p in t.partition_indexes]) for t in request.topics]
    auth = services.authorizer
    if auth is None:
        return await services.dataplane.describe_producers.describe(topics)
    # KafkaApis: READ on each (validly named) topic, else each partition TOPIC_AUTHORIZATION_FAILED, in place.
    denied = {name for name, _ in topics if topic_name_error(name) is None
              and not auth.authorize(ctx, AclOperation.READ, ResourceType.TOPIC, name)}
    answer = await services.dataplane.describe_producers.describe([t for t in topics if t[0] not in denied])
    described = iter(answer["topics"])
    return {**answer, "topics": [
        {"name": name, "partitions": [{"partition_index": p, "error_code": ErrorCode.topic_authorization_failed,
                                       "error_message": TOPIC_DENIED, "active_producers": []} for p in parts]}
        if name in denied else next(described) for name, parts in topics]}
