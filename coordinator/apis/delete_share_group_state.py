"""DeleteShareGroupState (KIP-932, broker-internal): tombstone a share partition's state."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import cluster_action_denied

API = Api(ApiKey.DELETE_SHARE_GROUP_STATE, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    denied = cluster_action_denied(services, ctx)
    group_id = as_str(request.group_id)
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            code = ErrorCode.cluster_authorization_failed if denied else \
                await services.share_coordinator.delete((group_id, t.topic_id, int(p.partition)))
            parts.append({"partition": p.partition, "error_code": code, "error_message": None})
        results.append({"topic_id": t.topic_id, "partitions": parts})
    if not denied and services.share_partitions is not None:
        services.share_partitions.forget(group_id, [(t.topic_id, int(p.partition)) for t in request.topics
                                                    for p in t.partitions])
    return {"results": results}
