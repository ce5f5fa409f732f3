"""DeleteShareGroupState (KIP-932, broker-internal): tombstone a share partition's state."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import ShareStateKey, answer_share_partitions, cluster_action_denied

API = Api(ApiKey.DELETE_SHARE_GROUP_STATE, 0, 0)
REFUSED = {"error_code": ErrorCode.cluster_authorization_failed}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    async def delete(key: ShareStateKey, _partition: Any) -> dict[str, Any]:
        return {"error_code": await services.share_coordinator.delete(key)}

    denied = cluster_action_denied(services, ctx)
    answer = await answer_share_partitions(request, denied, REFUSED, delete)
    if not denied and services.share_partitions is not None:
        services.share_partitions.forget(as_str(request.group_id), [(t.topic_id, int(p.partition))
                                                                    for t in request.topics for p in t.partitions])
    return answer
