"""WriteTxnMarkers: what a transaction coordinator asks a partition leader to write. Our own coordinator
writes its markers in-process, through the same router this handler uses (``__consumer_offsets``
partitions to the group coordinator, the rest to the data plane); the API serves another coordinator
or a tool that sends them, answering per producer and partition as KafkaApis does."""

from __future__ import annotations

import asyncio
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation
from ..server.dispatch import RequestContext
from ..transactions.markers import Marker, MarkerRouter
from .api import Api
from .services import Services
from .transactions import partition_exists

API = Api(ApiKey.WRITE_TXN_MARKERS, 1, 1)  # kio (as Kafka 4) has no v0

# The group coordinator's "not here" errors are answered as a partition leader's (KafkaApis does the same).
_LEADER_ERRORS = {ErrorCode.coordinator_not_available, ErrorCode.coordinator_load_in_progress, ErrorCode.not_coordinator}


async def _one(services: Services, router: MarkerRouter, m: Any) -> dict:
    partitions = [(t.name, int(p)) for t in m.topics for p in t.partition_indexes]
    errors: dict[tuple[str, int], ErrorCode] = {tp: ErrorCode.unknown_topic_or_partition for tp in partitions
                                                if not partition_exists(services, *tp)}
    present = tuple(tp for tp in partitions if tp not in errors)
    if present:
        written = await router.write(Marker(int(m.producer_id), int(m.producer_epoch), int(m.coordinator_epoch),
                                            bool(m.transaction_result), present))
        errors.update({tp: ErrorCode.not_leader_or_follower if e in _LEADER_ERRORS else e for tp, e in written.items()})
    topics: dict[str, list[dict]] = {}
    for (topic, partition) in partitions:
        topics.setdefault(topic, []).append({"partition_index": partition, "error_code": errors[(topic, partition)]})
    return {"producer_id": int(m.producer_id),
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize_cluster(ctx, AclOperation.ALTER, log_if_denied=False) \
            and not auth.authorize_cluster(ctx, AclOperation.CLUSTER_ACTION):
        # KafkaApis: ALTER on the cluster, else CLUSTER_ACTION; refused, every partition carries the error.
        return {"markers": [{"producer_id": int(m.producer_id), "topics": [
            {"name": t.name, "partitions": [{"partition_index": int(p), "error_code": ErrorCode.cluster_authorization_failed}
                                            for p in t.partition_indexes]} for t in m.topics]} for m in request.markers]}
    router = services.transactions.markers if services.transactions is not None else MarkerRouter(services.groups, None)
    return {"markers": list(await asyncio.gather(*(_one(services, router, m) for m in request.markers)))}
