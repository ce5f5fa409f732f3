"""Produce: append record batches, with idempotent producers' sequence checks.

With acks=0 the client waits for no answer, so the handler returns ``NO_RESPONSE`` after the append; if
any partition failed it returns ``CLOSE_CONNECTION`` instead, as Kafka closes the connection so that such
a producer still learns of the failure (it reconnects and refreshes its metadata).
"""

from __future__ import annotations

from typing import Any

import structlog

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_produce import ProduceRequestView

from ..dataplane.produce import PartitionData, TopicData
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import CLOSE_CONNECTION, NO_RESPONSE, RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.PRODUCE, 3, 11)

log = structlog.get_logger("groupcoord.produce")


def _partition_errors(response: dict) -> dict[str, str]:
    """The failed partitions of a produce response, as ``topic-partition: ERROR_NAME``."""
    return {f"{topic['name']}-{part['index']}": ErrorCode(part["error_code"]).name.upper()
            for topic in response["responses"] for part in topic["partition_responses"]
            if part["error_code"] != ErrorCode.none}


def _fire_and_forget_outcome(ctx: RequestContext, response: dict) -> Any:
    """acks=0: no answer; on any partition error, close the connection (KafkaApis' closeConnection)."""
    errors = _partition_errors(response)
    if not errors:
        return NO_RESPONSE
    log.info("closing connection after a failed acks=0 produce", correlation_id=ctx.correlation_id,
             client_id=ctx.client_id, peer=ctx.client_host, connection=ctx.connection_id, errors=errors)
    return CLOSE_CONNECTION


TRANSACTIONAL_FLAG = 0x10
ATTRIBUTES_AT = 21  # baseOffset, batchLength, partitionLeaderEpoch, magic, crc


def _has_transactional_records(topics: list[TopicData]) -> bool:
    """RequestUtils.hasTransactionalRecords: the first batch of some partition is transactional."""
    for t in topics:
        for p in t.partitions:
            r = p.records
            if r is not None and len(r) >= ATTRIBUTES_AT + 2 and int.from_bytes(r[ATTRIBUTES_AT:ATTRIBUTES_AT + 2]) & TRANSACTIONAL_FLAG:
                return True
    return False


def _refused_partitions(t: TopicData, error: int) -> dict:
    return {"name": t.name, "partition_responses": [
        {"index": p.index, "error_code": error, "base_offset": -1, "log_append_time": -1, "log_start_offset": -1,
         "record_errors": [], "error_message": None} for p in t.partitions]}


def topics_of(request: Any) -> list[TopicData]:
    """A kio-read ProduceRequest's topics as the dataplane takes them (the fast reader builds the same)."""
    return [TopicData(t.name, tuple(PartitionData(int(p.index), None if p.records is None else bytes(p.records))
                                    for p in t.partition_data))
            for t in request.topic_data]


async def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """``request``: kio's entity, or the fast reader's view with its topics already read (produce_codec.py)."""
    topics = request.topics if type(request) is ProduceRequestView else topics_of(request)
    acks = int(request.acks)
    auth = services.authorizer
    denied: set[str] = set()
    if auth is not None:
        # KafkaApis: transactional records need WRITE on their transactional id (the whole request fails
        # otherwise); then WRITE on each topic, the others' partitions TOPIC_AUTHORIZATION_FAILED unwritten.
        txn = request.transactional_id
        if _has_transactional_records(topics) and (
                txn is None or not auth.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn)):
            refused = {"responses": [_refused_partitions(t, ErrorCode.transactional_id_authorization_failed)
                                     for t in topics], "throttle_time": 0}
            return _fire_and_forget_outcome(ctx, refused) if acks == 0 else refused
        names = {t.name for t in topics}
        denied = names - auth.filter_authorized(ctx, AclOperation.WRITE, ResourceType.TOPIC, names)
    try:
        allowed = [t for t in topics if t.name not in denied] if denied else topics
        response = await services.dataplane.produce.produce(acks=acks, api_version=ctx.api_version, topics=allowed,
                                                            transactional_id=request.transactional_id)
        if denied:
            written = iter(response["responses"])
            response = {**response, "responses": [
                _refused_partitions(t, ErrorCode.topic_authorization_failed) if t.name in denied else next(written)
                for t in topics]}
    except Exception as exc:
        if acks != 0:
            raise       # the dispatcher answers UNKNOWN_SERVER_ERROR
        # Kafka's ProduceRequest has no error response for acks=0, so a failure closes the connection.
        log.error("acks=0 produce failed; closing the connection", correlation_id=ctx.correlation_id,
                  client_id=ctx.client_id, peer=ctx.client_host, connection=ctx.connection_id,
                  error=repr(exc), exc_info=exc)
        return CLOSE_CONNECTION
    return _fire_and_forget_outcome(ctx, response) if acks == 0 else response
