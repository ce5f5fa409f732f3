"""DescribeTransactions: the state of each named transactional id (kafka-transactions.sh describe)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_TRANSACTIONS, 0, 0)


def _unavailable(transactional_id: str) -> dict:
    return {"error_code": ErrorCode.coordinator_not_available, "transactional_id": transactional_id,
            "transaction_state": "", "transaction_timeout": 0, "transaction_start_time": -1, "producer_id": -1,
            "producer_epoch": -1, "topics": []}


def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    ids = [str(t) for t in request.transactional_ids]
    if services.transactions is None:
        return {"throttle_time": 0, "transaction_states": [_unavailable(t) for t in ids]}
    return {"throttle_time": 0, "transaction_states": services.transactions.describe(ids)}
