"""AddPartitionsToTxn: partitions join a producer's transaction.

v0-3 come from producers (one transaction); v4+ is the brokers' batched form (several transactions,
and ``verify_only``: is each partition already in the transaction? — what a partition leader asks before
a transactional Produce, KIP-890). An unknown partition fails the whole transaction's request:
UNKNOWN_TOPIC_OR_PARTITION for it, OPERATION_NOT_ATTEMPTED for the others, as KafkaApis answers.
"""

from __future__ import annotations

import asyncio
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .transactions import older_fenced, partition_exists

API = Api(ApiKey.ADD_PARTITIONS_TO_TXN, 0, 5)

PRODUCER_FENCED_VERSION = 2
BATCHED_VERSION = 4
TRANSACTION_ABORTABLE_VERSION = 5


def _by_topic(errors: dict[tuple[str, int], ErrorCode]) -> list[dict]:
    topics: dict[str, list[dict]] = {}
    for (topic, partition), error in errors.items():
        topics.setdefault(topic, []).append({"partition_index": partition, "partition_error_code": error})
    return [{"name": t, "results_by_partition": ps} for t, ps in topics.items()]


async def _one(services: Services, version: int, transactional_id: str, producer_id: int, producer_epoch: int,
               verify_only: bool, topics: Any) -> dict[tuple[str, int], ErrorCode]:
    partitions = [(t.name, int(p)) for t in topics for p in t.partitions]
    missing = [tp for tp in partitions if not partition_exists(services, *tp)]
    if missing:
        return {tp: ErrorCode.unknown_topic_or_partition if tp in missing else ErrorCode.operation_not_attempted
                for tp in partitions}
    coordinator = services.transactions
    if coordinator is None:
        return {tp: ErrorCode.coordinator_not_available for tp in partitions}
    if verify_only:
        errors = coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
        if version < TRANSACTION_ABORTABLE_VERSION:
            errors = {tp: ErrorCode.invalid_txn_state if e == ErrorCode.transaction_abortable else e
                      for tp, e in errors.items()}
        return errors
    answer = coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions)
    if not isinstance(answer, dict):
        answer = await answer
    error = older_fenced(ErrorCode(answer["error_code"]), version, PRODUCER_FENCED_VERSION)
    return {tp: error for tp in partitions}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    version = ctx.api_version
    if version < BATCHED_VERSION:
        errors = await _one(services, version, str(request.v3_and_below_transactional_id),
                            int(request.v3_and_below_producer_id), int(request.v3_and_below_producer_epoch), False,
                            request.v3_and_below_topics)
        return {"throttle_time": 0, "results_by_topic_v3_and_below": _by_topic(errors)}
    results = await asyncio.gather(*(
        _one(services, version, str(t.transactional_id), int(t.producer_id), int(t.producer_epoch),
             bool(t.verify_only), t.topics)
        for t in request.transactions))
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results_by_transaction": [
        {"transactional_id": str(t.transactional_id), "topic_results": _by_topic(errors)}
        for t, errors in zip(request.transactions, results)]}
