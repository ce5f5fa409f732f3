"""ReadShareGroupState (KIP-932, broker-internal): a share partition's persisted state (start offset, state
epoch, state batches), what a share partition loads from on first use."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import ShareStateKey, answer_share_partitions, cluster_action_denied

API = Api(ApiKey.READ_SHARE_GROUP_STATE, 0, 0)
REFUSED = {"error_code": ErrorCode.cluster_authorization_failed, "state_epoch": 0, "start_offset": -1,
           "state_batches": ()}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    async def read(key: ShareStateKey, partition: Any) -> dict[str, Any]:
        a = await services.share_coordinator.read(key, int(partition.leader_epoch))
        return {"error_code": a["error_code"], "error_message": a.get("error_message"),
                "state_epoch": a["state_epoch"], "start_offset": a["start_offset"],
                "state_batches": [{"first_offset": b.first_offset, "last_offset": b.last_offset,
                                   "delivery_state": b.delivery_state, "delivery_count": b.delivery_count}
                                  for b in a["state_batches"]]}

    return await answer_share_partitions(request, cluster_action_denied(services, ctx), REFUSED, read)
