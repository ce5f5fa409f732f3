"""TxnOffsetCommit: offsets committed inside a transaction, pending until its marker (KIP-98, KIP-447).

v3+ carries the consumer's group metadata (generation, member id, instance id), checked as Kafka checks
it for classic and consumer groups. First, as Kafka 4's group coordinator does with
transaction.partition.verification.enable, the group's ``__consumer_offsets`` partition must be in the
producer's transaction (AddOffsetsToTxn put it there): if not, every partition is refused with
TRANSACTION_ABORTABLE (INVALID_TXN_STATE before v4), and a fenced producer hears INVALID_PRODUCER_EPOCH.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC
from groupcoord.protocol.values import as_str

from ..groups.requests import CommitPartition
from ..groups.lazy_requests import TxnOffsetCommit
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.TXN_OFFSET_COMMIT, 0, 4)

TRANSACTION_ABORTABLE_VERSION = 4


def commit_request(ctx: RequestContext, r: Any) -> TxnOffsetCommit:
    return TxnOffsetCommit(
        transactional_id=as_str(r.transactional_id),
        group_id=as_str(r.group_id),
        producer_id=int(r.producer_id),
        producer_epoch=int(r.producer_epoch),
        topics=tuple(
            (t.name, tuple(CommitPartition(int(p.partition_index), int(p.committed_offset),
                                           int(getattr(p, "committed_leader_epoch", -1)), p.committed_metadata)
                           for p in t.partitions))
            for t in r.topics
        ),
        generation_id=int(getattr(r, "generation_id", -1)),
        member_id=as_str(getattr(r, "member_id", "")),
        group_instance_id=getattr(r, "group_instance_id", None),
        version=ctx.api_version,
    )


def _verification_error(services: Services, req: TxnOffsetCommit) -> ErrorCode | None:
    coordinator = services.transactions
    if coordinator is None or not coordinator.config.transaction_partition_verification_enable:
        return None
    partition = (OFFSETS_TOPIC, services.groups.partition_for(req.group_id))
    error = coordinator.verify_partitions(req.transactional_id, req.producer_id, req.producer_epoch, [partition])[partition]
    if error == ErrorCode.none:
        return None
    if error == ErrorCode.producer_fenced:
        return ErrorCode.invalid_producer_epoch
    if error == ErrorCode.transaction_abortable and req.version < TRANSACTION_ABORTABLE_VERSION:
        return ErrorCode.invalid_txn_state
    return error


def _all_partitions(req: TxnOffsetCommit, error: ErrorCode) -> dict:
    return {"throttle_time": 0, "topics": [
        {"name": t, "partitions": [{"partition_index": p.partition, "error_code": error} for p in ps]}
        for t, ps in req.topics]}


async def _authorized(services: Services, auth: Any, ctx: RequestContext, req: TxnOffsetCommit) -> dict:
    """KafkaApis: WRITE on the transactional id, READ on the group (each else every partition carries the
    error), then READ on each topic: the refused topics' partitions TOPIC_AUTHORIZATION_FAILED, the rest
    committed (nothing asked of the coordinator when none is left)."""
    if not auth.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return _all_partitions(req, ErrorCode.transactional_id_authorization_failed)
    if not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return _all_partitions(req, ErrorCode.group_authorization_failed)
    allowed = auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (t for t, _ in req.topics))
    denied = [{"name": t, "partitions": [{"partition_index": p.partition, "error_code": ErrorCode.topic_authorization_failed}
                                         for p in ps]} for t, ps in req.topics if t not in allowed]
    kept = replace(req, topics=tuple((t, ps) for t, ps in req.topics if t in allowed))
    if not kept.topics:
        return {"throttle_time": 0, "topics": denied}
    answer = _unauthorised_commit(services, kept)
    if not isinstance(answer, dict):
        answer = await answer
    return {**answer, "topics": denied + list(answer["topics"])}


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    req = commit_request(ctx, request)
    auth = services.authorizer
    if auth is not None:
        return _authorized(services, auth, ctx, req)
    return _unauthorised_commit(services, req)


def _unauthorised_commit(services: Services, req: TxnOffsetCommit) -> Any:
    """The commit itself, once authorisation (if any) has passed."""
    error = _verification_error(services, req)
    if error is not None:
        return {"throttle_time": 0, "topics": [
            {"name": t, "partitions": [{"partition_index": p.partition, "error_code": error} for p in ps]}
            for t, ps in req.topics]}
    return services.groups.commit_transactional_offsets(req)
