"""What the share-group APIs share: for ShareFetch and ShareAcknowledge, reading acknowledgement batches, the
topics a principal may READ (Kafka's KafkaApis checks READ on the group, then READ on each topic) and applying
acknowledgements; for the share coordinator's internal state APIs, the CLUSTER_ACTION check and the walk over
the request's partitions."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from ..share.share_partition import AckBatch, AcknowledgeType
from .services import Services

NO_LEADER = {"leader_id": -1, "leader_epoch": -1}
TopicIdPartition = tuple[uuid.UUID, int]
ShareStateKey = tuple[str, uuid.UUID, int]  # group id, topic id, partition: a share partition's state record key


def read_acks(partition: Any, renew_allowed: bool) -> tuple[list[AckBatch], ErrorCode | None]:
    """A partition's acknowledgement batches; INVALID_REQUEST for overlapping or malformed batches, or a RENEW
    where the version or the request does not allow one."""
    batches = []
    previous_last = -1
    for b in partition.acknowledgement_batches:
        types = tuple(int(t) for t in b.acknowledge_types)
        first, last = int(b.first_offset), int(b.last_offset)
        if not types or last < first or first <= previous_last:
            return [], ErrorCode.invalid_request
        if not renew_allowed and AcknowledgeType.RENEW in types:
            return [], ErrorCode.invalid_request
        previous_last = last
        batches.append(AckBatch(first, last, types))
    return batches, None


def group_denied(services: Services, ctx: RequestContext, group_id: str) -> bool:
    auth = services.authorizer
    return auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, group_id)


def topic_errors(services: Services, ctx: RequestContext, topic_ids: set[uuid.UUID]) -> dict[uuid.UUID, ErrorCode]:
    """UNKNOWN_TOPIC_ID for ids this broker does not know, TOPIC_AUTHORIZATION_FAILED for topics not READable."""
    catalog = services.dataplane.topics
    names: dict[uuid.UUID, str] = {}
    errors: dict[uuid.UUID, ErrorCode] = {}
    for tid in topic_ids:
        topic = catalog.by_id(tid) if tid is not None else None
        if topic is None:
            errors[tid] = ErrorCode.unknown_topic_id
        else:
            names[tid] = topic.name
    auth = services.authorizer
    if auth is not None and names:
        allowed = auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, set(names.values()))
        for tid, name in names.items():
            if name not in allowed:
                errors[tid] = ErrorCode.topic_authorization_failed
    return errors


async def apply_acks(services: Services, group_id: str, member_id: str,
                     acks: dict[TopicIdPartition, list[AckBatch]]) -> dict[TopicIdPartition, ErrorCode]:
    manager = services.share_partitions
    results = {}
    for (tid, p), batches in acks.items():
        results[(tid, p)] = await manager.acknowledge(group_id, member_id, tid, p, batches)
    return results


def group_and_member(request: Any) -> tuple[str, str]:
    return as_str(request.group_id), as_str(request.member_id)


def cluster_action_denied(services: Services, ctx: RequestContext) -> bool:
    """The share coordinator's internal APIs need CLUSTER_ACTION on the cluster (brokers call them)."""
    auth = services.authorizer
    return auth is not None and not auth.authorize(ctx, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER,
                                                  "kafka-cluster")



async def answer_share_partitions(request: Any, denied: bool, refused: dict[str, Any],
                                  answer: Callable[[ShareStateKey, Any], Awaitable[dict[str, Any]]]) -> dict:
    """The answer of a share coordinator's state API (Initialize, Read, ReadSummary, Write, Delete
    ShareGroupState): per topic and partition of the request, ``answer``'s fields for the partition's state key
    and the request's partition, or ``refused``'s for every partition when the caller lacks CLUSTER_ACTION —
    then the share coordinator is not asked at all. ``error_message`` is null unless the fields give one."""
    group_id = as_str(request.group_id)
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            fields = refused if denied else await answer((group_id, t.topic_id, int(p.partition)), p)
            parts.append({"partition": p.partition, "error_message": None, **fields})
        results.append({"topic_id": t.topic_id, "partitions": parts})
    return {"results": results}
