"""WriteShareGroupState (KIP-932, broker-internal): persist a share partition's changed state batches and
start offset, as a ShareUpdate record or, every share.coordinator.snapshot.update.records.per.snapshot
updates, a ShareSnapshot (coordinator/share/shard.py)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from ..share.records import StateBatch
from ..share.shard import WriteData
from .api import Api
from .services import Services
from .share_common import cluster_action_denied

API = Api(ApiKey.WRITE_SHARE_GROUP_STATE, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    denied = cluster_action_denied(services, ctx)
    group_id = as_str(request.group_id)
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            if denied:
                code = ErrorCode.cluster_authorization_failed
            else:
                data = WriteData(int(p.state_epoch), int(p.leader_epoch), int(p.start_offset),
                                 tuple(StateBatch(int(b.first_offset), int(b.last_offset), int(b.delivery_state),
                                                  int(b.delivery_count)) for b in p.state_batches),
                                 int(getattr(p, "delivery_complete_count", -1)))
                code = await services.share_coordinator.write((group_id, t.topic_id, int(p.partition)), data)
            parts.append({"partition": p.partition, "error_code": code, "error_message": None})
        results.append({"topic_id": t.topic_id, "partitions": parts})
    return {"results": results}
