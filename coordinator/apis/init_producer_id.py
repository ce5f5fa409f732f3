"""InitProducerId: a producer id and epoch — from the data plane for an idempotent producer, from the
transaction coordinator (epoch bump, fencing of the previous incarnation) for a transactional one."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from ..transactions.shard import ExpectedProducer, init_error
from .api import Api
from .services import Services
from .transactions import older_fenced

API = Api(ApiKey.INIT_PRODUCER_ID, 0, 5)

PRODUCER_FENCED_VERSION = 4


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
    transactional_id = request.transactional_id
    producer_id = int(getattr(request, "producer_id", -1))
    producer_epoch = int(getattr(request, "producer_epoch", -1))
    if transactional_id is None:
        return services.dataplane.init_producer_id(None, producer_id, producer_epoch)
    if (producer_id == -1) != (producer_epoch == -1):
        return init_error(ErrorCode.invalid_request)
    if services.transactions is None:
        return init_error(ErrorCode.coordinator_not_available)
    expected = None if producer_id == -1 else ExpectedProducer(producer_id, producer_epoch)
    timeout_ms = int(request.transaction_timeout.total_seconds() * 1000) \
        if hasattr(request.transaction_timeout, "total_seconds") else int(request.transaction_timeout)
    answer = services.transactions.init_producer_id(str(transactional_id), timeout_ms, expected)
    if not isinstance(answer, dict):
        answer = await answer
    return {**answer, "error_code": older_fenced(ErrorCode(answer["error_code"]), ctx.api_version, PRODUCER_FENCED_VERSION)}
