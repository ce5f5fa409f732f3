"""ReadShareGroupState (KIP-932, broker-internal): a share partition's persisted state (start offset, state
epoch, state batches), what a share partition loads from on first use."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import cluster_action_denied

API = Api(ApiKey.READ_SHARE_GROUP_STATE, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    denied = cluster_action_denied(services, ctx)
    group_id = as_str(request.group_id)
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            if denied:
                a = {"error_code": ErrorCode.cluster_authorization_failed, "state_epoch": 0, "start_offset": -1,
                     "state_batches": ()}
            else:
                a = await services.share_coordinator.read((group_id, t.topic_id, int(p.partition)), int(p.leader_epoch))
            parts.append({"partition": p.partition, "error_code": a["error_code"], "error_message": a.get("error_message"),
                          "state_epoch": a["state_epoch"], "start_offset": a["start_offset"],
                          "state_batches": [{"first_offset": b.first_offset, "last_offset": b.last_offset,
                                             "delivery_state": b.delivery_state, "delivery_count": b.delivery_count}
                                            for b in a["state_batches"]]})
        results.append({"topic_id": t.topic_id, "partitions": parts})
    return {"results": results}
