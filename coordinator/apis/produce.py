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

from ..dataplane.produce import PartitionData, TopicData
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


async def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    topics = [TopicData(t.name, tuple(PartitionData(int(p.index), None if p.records is None else bytes(p.records))
                                      for p in t.partition_data))
              for t in request.topic_data]
    acks = int(request.acks)
    try:
        response = await services.dataplane.produce.produce(acks=acks, api_version=ctx.api_version, topics=topics,
                                                            transactional_id=request.transactional_id)
    except Exception as exc:
        if acks != 0:
            raise       # the dispatcher answers UNKNOWN_SERVER_ERROR
        # Kafka's ProduceRequest has no error response for acks=0, so a failure closes the connection.
        log.error("acks=0 produce failed; closing the connection", correlation_id=ctx.correlation_id,
                  client_id=ctx.client_id, peer=ctx.client_host, connection=ctx.connection_id,
                  error=repr(exc), exc_info=exc)
        return CLOSE_CONNECTION
    return _fire_and_forget_outcome(ctx, response) if acks == 0 else response
