"""DescribeTransactions: the state of each named transactional id (kafka-transactions.sh describe)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation, ResourceType
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
    auth = services.authorizer
    if auth is None:
        return {"throttle_time": 0, "transaction_states": services.transactions.describe(ids)}
    # KafkaApis: DESCRIBE on each transactional id (else only the error); of an authorised one's partitions,
    # only the topics the principal may DESCRIBE are shown.
    allowed = [t for t in ids if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t)]
    described = iter(services.transactions.describe(allowed) if allowed else [])
    states = []
    for t in ids:
        if t not in allowed:
            # Kafka's TransactionState with only the id and the error: every other field its default (0, "")
            states.append({"error_code": ErrorCode.transactional_id_authorization_failed, "transactional_id": t,
                           "transaction_state": "", "transaction_timeout": 0, "transaction_start_time": 0,
                           "producer_id": 0, "producer_epoch": 0, "topics": []})
            continue
        state = next(described)
        states.append({**state, "topics": [x for x in state["topics"]
                                           if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, x["topic"])]})
    return {"throttle_time": 0, "transaction_states": states}
