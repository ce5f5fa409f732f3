"""InitializeShareGroupState (KIP-932, broker-internal): start a share partition's state afresh with a state
epoch and start offset (what the group coordinator asks when partitions are first assigned)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import cluster_action_denied

API = Api(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    denied = cluster_action_denied(services, ctx)
    group_id = as_str(request.group_id)
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            code = ErrorCode.cluster_authorization_failed if denied else await services.share_coordinator.initialize(
                (group_id, t.topic_id, int(p.partition)), int(p.state_epoch), int(p.start_offset))
            parts.append({"partition": p.partition, "error_code": code, "error_message": None})
        results.append({"topic_id": t.topic_id, "partitions": parts})
    return {"results": results}
