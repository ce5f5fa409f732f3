"""ReadShareGroupStateSummary (KIP-932, broker-internal): a share partition's start offset and epochs, what
DescribeShareGroupOffsets reports."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import ShareStateKey, answer_share_partitions, cluster_action_denied

API = Api(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, 1)
REFUSED = {"error_code": ErrorCode.cluster_authorization_failed, "state_epoch": 0, "leader_epoch": -1,
           "start_offset": -1, "delivery_complete_count": -1}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    async def read_summary(key: ShareStateKey, _partition: Any) -> dict[str, Any]:
        a = await services.share_coordinator.read_summary(key)
        return {"error_code": a["error_code"], "state_epoch": a["state_epoch"], "leader_epoch": a["leader_epoch"],
                "start_offset": a["start_offset"], "delivery_complete_count": a["delivery_complete_count"]}

    return await answer_share_partitions(request, cluster_action_denied(services, ctx), REFUSED, read_summary)
