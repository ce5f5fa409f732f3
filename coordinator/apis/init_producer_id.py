"""InitProducerId: a producer id and epoch for an idempotent producer (or a bumped epoch for an existing one)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.INIT_PRODUCER_ID, 0, 5)


def _refused(error: int) -> dict:
    return {"throttle_time": 0, "error_code": error, "producer_id": -1, "producer_epoch": -1}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None:
        # KafkaApis: WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the cluster or else
        # WRITE on some topic (authorizeByResourceType), CLUSTER_AUTHORIZATION_FAILED otherwise.
        txn = request.transactional_id
        if txn is not None:
            if not auth.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn):
                return _refused(ErrorCode.transactional_id_authorization_failed)
        elif (not auth.authorize_cluster(ctx, AclOperation.IDEMPOTENT_WRITE, log_if_denied=False)
              and not auth.authorize_by_resource_type(ctx, AclOperation.WRITE, ResourceType.TOPIC)):
            auth.authorize_cluster(ctx, AclOperation.IDEMPOTENT_WRITE)  # counted and logged once, as denied
            return _refused(ErrorCode.cluster_authorization_failed)
    return services.dataplane.init_producer_id(request.transactional_id, int(getattr(request, "producer_id", -1)),
                                               int(getattr(request, "producer_epoch", -1)))
