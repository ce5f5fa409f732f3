"""Metadata: the broker (this one, at the address of the listener the client came in on) and the topics
asked for, each partition led by this node.

The answer depends only on the version and what the catalog said, so identical questions (clients
refresh metadata constantly) reuse one encoding.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Sequence

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.encode import EncodedBody, encode_body
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.registry import response_class

from ..cluster import ClusterIdentity
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.METADATA, 0, 13)

AUTHORIZED_OPERATIONS_OMITTED = -2147483648


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """One topic as Metadata reports it (the data plane's catalog answers with its own of this shape)."""

    name: str | None
    topic_id: uuid.UUID
    partitions: int
    is_internal: bool = False
    error_code: int = 0


def broker_entry(identity: ClusterIdentity) -> dict[str, Any]:
    """This node as Metadata and DescribeCluster list it."""
    return {"node_id": identity.node_id, "host": identity.host, "port": identity.port, "rack": None,
            "broker_id": identity.node_id, "is_fenced": False}


async def handle(services: Services, ctx: RequestContext, request: Any) -> EncodedBody:
    topics = services.topics
    names: list[str] | None
    unknown_ids: list[TopicInfo] = []
    if request.topics is None or (ctx.api_version == 0 and not request.topics):
        names = None  # all topics
    else:
        names = []
        for t in request.topics:
            if t.name is not None:
                names.append(t.name)
                continue
            # v10+: a topic asked for by id only (KIP-848 consumers learn their assignment as topic ids).
            topic_id = getattr(t, "topic_id", None)
            found = topics.by_id(topic_id) if topic_id not in (None, ZERO_UUID) and hasattr(topics, "by_id") else None
            if found is not None:
                names.append(found.name)
            else:
                unknown_ids.append(TopicInfo(None, topic_id or ZERO_UUID, 0, False, int(ErrorCode.unknown_topic_id)))
    auto_create = bool(getattr(request, "allow_auto_topic_creation", True))
    infos = topics.describe(names, auto_create)
    if hasattr(infos, "__await__"):
        infos = await infos
    infos = list(infos) + unknown_ids
    key = (ctx.api_version, ctx.listener, tuple((i.name, i.topic_id, i.partitions, i.is_internal, i.error_code) for i in infos))

    def encode() -> EncodedBody:
        return EncodedBody(encode_body(response_class(ApiKey.METADATA, ctx.api_version),
                                       _response(services.identity_for(ctx.listener), infos)))

    return services.encoded.get(ApiKey.METADATA, key, encode)


def _response(identity: ClusterIdentity, infos: Sequence[Any]) -> dict[str, Any]:
    node = identity.node_id
    topics = []
    for info in infos:
        topics.append(
            {
                "error_code": info.error_code,
                "name": info.name,
                "topic_id": info.topic_id,
                "is_internal": info.is_internal,
                "topic_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": p,
                        "leader_id": node,
                        "leader_epoch": 0,
                        "replica_nodes": (node,),
                        "isr_nodes": (node,),
                        "offline_replicas": (),
                    }
                    for p in range(info.partitions)
                ]
                if info.error_code == 0
                else [],
            }
        )
    return {
        "throttle_time": 0,
        "error_code": 0,
        "brokers": [broker_entry(identity)],
        "cluster_id": identity.cluster_id,
        "controller_id": identity.controller_id,
        "topics": topics,
        "cluster_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
