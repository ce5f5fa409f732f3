"""ReadShareGroupStateSummary (KIP-932, broker-internal): a share partition's start offset and epochs, what
DescribeShareGroupOffsets reports."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import cluster_action_denied

API = Api(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    denied = cluster_action_denied(services, ctx)
    group_id = as_str(request.group_id)
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            if denied:
                a = {"error_code": ErrorCode.cluster_authorization_failed, "state_epoch": 0, "leader_epoch": -1,
                     "start_offset": -1, "delivery_complete_count": -1}
            else:
                a = await services.share_coordinator.read_summary((group_id, t.topic_id, int(p.partition)))
            parts.append({"partition": p.partition, "error_code": a["error_code"], "error_message": None,
                          "state_epoch": a["state_epoch"], "leader_epoch": a["leader_epoch"],
                          "start_offset": a["start_offset"], "delivery_complete_count": a["delivery_complete_count"]})
        results.append({"topic_id": t.topic_id, "partitions": parts})
    return {"results": results}
