"""WriteShareGroupState (KIP-932, broker-internal): persist a share partition's changed state batches and
start offset, as a ShareUpdate record or, every share.coordinator.snapshot.update.records.per.snapshot
updates, a ShareSnapshot (coordinator/share/shard.py)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from ..share.records import StateBatch
from ..share.shard import WriteData
from .api import Api
from .services import Services
from .share_common import ShareStateKey, answer_share_partitions, cluster_action_denied

API = Api(ApiKey.WRITE_SHARE_GROUP_STATE, 0, 1)
REFUSED = {"error_code": ErrorCode.cluster_authorization_failed}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    async def write(key: ShareStateKey, p: Any) -> dict[str, Any]:
        data = WriteData(int(p.state_epoch), int(p.leader_epoch), int(p.start_offset),
                         tuple(StateBatch(int(b.first_offset), int(b.last_offset), int(b.delivery_state),
                                          int(b.delivery_count)) for b in p.state_batches),
                         int(getattr(p, "delivery_complete_count", -1)))
        return {"error_code": await services.share_coordinator.write(key, data)}

    return await answer_share_partitions(request, cluster_action_denied(services, ctx), REFUSED, write)
