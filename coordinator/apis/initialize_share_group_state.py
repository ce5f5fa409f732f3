"""InitializeShareGroupState (KIP-932, broker-internal): start a share partition's state afresh with a state
epoch and start offset (what the group coordinator asks when partitions are first assigned)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import ShareStateKey, answer_share_partitions, cluster_action_denied

API = Api(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, 0)
REFUSED = {"error_code": ErrorCode.cluster_authorization_failed}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    async def initialize(key: ShareStateKey, p: Any) -> dict[str, Any]:
        return {"error_code": await services.share_coordinator.initialize(key, int(p.state_epoch),
                                                                           int(p.start_offset))}

    return await answer_share_partitions(request, cluster_action_denied(services, ctx), REFUSED, initialize)
