"""InitProducerId: a producer id and epoch — from the data plane for an idempotent producer, from the
transaction coordinator (epoch bump, fencing of the previous incarnation) for a transactional one."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from ..transactions.shard import ExpectedProducer, init_error
from .api import Api
from .services import Services
from .transactions import older_fenced

API = Api(ApiKey.INIT_PRODUCER_ID, 0, 5)

PRODUCER_FENCED_VERSION = 4


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
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
