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

from ..security.acl import AclOperation, ResourceType
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


INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def _refused(services: Services, ctx: RequestContext, transactional_id: str,
             partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode] | None:
    """KafkaApis, for a client's request (v0-3): WRITE on the transactional id, then WRITE on each
    non-internal topic; any refused (or unknown) partition fails the whole transaction's request, the
    others answering OPERATION_NOT_ATTEMPTED. None: authorised."""
    auth = services.authorizer
    if not auth.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return {tp: ErrorCode.transactional_id_authorization_failed for tp in partitions}
    allowed = auth.filter_authorized(ctx, AclOperation.WRITE, ResourceType.TOPIC,
                                     {t for t, _ in partitions if t not in INTERNAL_TOPICS})
    if all(t in allowed for t, _ in partitions):
        return None
    return {tp: ErrorCode.topic_authorization_failed if tp[0] not in allowed
            else ErrorCode.unknown_topic_or_partition if not partition_exists(services, *tp)
            else ErrorCode.operation_not_attempted for tp in partitions}


async def _one(services: Services, version: int, transactional_id: str, producer_id: int, producer_epoch: int,
               verify_only: bool, topics: Any, ctx: RequestContext | None = None) -> dict[tuple[str, int], ErrorCode]:
    partitions = [(t.name, int(p)) for t in topics for p in t.partitions]
    if services.authorizer is not None and ctx is not None and version < BATCHED_VERSION:
        refused = _refused(services, ctx, transactional_id, partitions)
        if refused is not None:
            return refused
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
                            request.v3_and_below_topics, ctx)
        return {"throttle_time": 0, "results_by_topic_v3_and_below": _by_topic(errors)}
    auth = services.authorizer
    if auth is not None and not auth.authorize_cluster(ctx, AclOperation.CLUSTER_ACTION):
        # v4+ come from brokers: CLUSTER_ACTION on the cluster, else the whole request is refused.
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed, "results_by_transaction": []}
    results = await asyncio.gather(*(
        _one(services, version, str(t.transactional_id), int(t.producer_id), int(t.producer_epoch),
             bool(t.verify_only), t.topics)
        for t in request.transactions))
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results_by_transaction": [
        {"transactional_id": str(t.transactional_id), "topic_results": _by_topic(errors)}
        for t, errors in zip(request.transactions, results)]}
