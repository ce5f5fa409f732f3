"""ListTransactions: every transactional id this coordinator owns, filtered by state, producer id and
(v1, KIP-994) how long the transaction has been running (kafka-transactions.sh list / find-hanging)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.LIST_TRANSACTIONS, 0, 1)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    if services.transactions is None:
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available, "unknown_state_filters": [],
                "transaction_states": []}
    duration = getattr(request, "duration_filter", -1)
    answer = services.transactions.list_transactions({str(s) for s in request.state_filters},
                                                     {int(p) for p in request.producer_id_filters}, int(duration))
    auth = services.authorizer
    if auth is None:
        return answer
    # KafkaApis: only the transactional ids the principal may DESCRIBE are listed.
    return {**answer, "transaction_states": [
        s for s in answer["transaction_states"]
        if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s["transactional_id"])]}
