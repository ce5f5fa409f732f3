"""Metadata: the broker (this one, at the address of the listener the client came in on) and the topics
asked for, each partition led by this node.

The answer depends only on the version and what the catalog said, so identical questions (clients
refresh metadata constantly) reuse one encoding.
"""

from __future__ import annotations

import uuid
from typing import Any, Sequence

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.encode import EncodedBody, encode_body
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.registry import response_class

from ..cluster import ClusterIdentity
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .operations import cluster_operations, topic_operations
from .services import Services

API = Api(ApiKey.METADATA, 0, 13)

AUTHORIZED_OPERATIONS_OMITTED = -2147483648


@frozen_dataclass
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


TOPIC_OPERATIONS_VERSION = 8
CLUSTER_OPERATIONS_VERSIONS = range(8, 11)  # v11 moved them to DescribeCluster


async def handle(services: Services, ctx: RequestContext, request: Any) -> EncodedBody:
    topics = services.topics
    auth = services.authorizer
    names: list[str] | None
    unknown_ids: list[TopicInfo] = []
    by_id: dict[str, Any] = {}
    all_topics = request.topics is None or (ctx.api_version == 0 and not request.topics)
    if all_topics:
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
                by_id[found.name] = found.topic_id
            else:
                unknown_ids.append(TopicInfo(None, topic_id or ZERO_UUID, 0, False, int(ErrorCode.unknown_topic_id)))
    auto_create = bool(getattr(request, "allow_auto_topic_creation", True))
    refused: list[TopicInfo] = []
    if auth is not None and names is not None:
        names, refused = _authorized_names(auth, ctx, topics, names, by_id, auto_create, services.groups.config)
    infos = topics.describe(names, auto_create) if names or names is None else []
    if hasattr(infos, "__await__"):
        infos = await infos
    if auth is not None and names is None:
        # Every topic: those without DESCRIBE are left out silently (not even logged, as Kafka).
        allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                         (i.name for i in infos), log_if_denied=False)
        infos = [i for i in infos if i.name in allowed]
    described = list(infos)
    infos = unknown_ids + described + refused
    topic_ops: tuple[int, ...] | None = None
    if ctx.api_version >= TOPIC_OPERATIONS_VERSION and getattr(request, "include_topic_authorized_operations", False):
        # KafkaApis sets them on every topic it looked up (the refused and the unknown ids keep the default)
        omitted = (AUTHORIZED_OPERATIONS_OMITTED,)
        topic_ops = (omitted * len(unknown_ids) + tuple(topic_operations(auth, ctx, i.name) for i in described)
                     + omitted * len(refused))
    cluster_ops = AUTHORIZED_OPERATIONS_OMITTED
    if ctx.api_version in CLUSTER_OPERATIONS_VERSIONS and getattr(request, "include_cluster_authorized_operations", False):
        cluster_ops = (cluster_operations(auth, ctx)
                       if auth is None or auth.authorize_cluster(ctx, AclOperation.DESCRIBE) else 0)
    key = (ctx.api_version, ctx.listener, tuple((i.name, i.topic_id, i.partitions, i.is_internal, i.error_code) for i in infos),
           topic_ops, cluster_ops)

    def encode() -> EncodedBody:
        return EncodedBody(encode_body(response_class(ApiKey.METADATA, ctx.api_version),
                                       _response(services.identity_for(ctx.listener), infos, topic_ops, cluster_ops)))

    return services.encoded.get(ApiKey.METADATA, key, encode)


def _authorized_names(auth: Any, ctx: RequestContext, topics: Any, names: list[str], by_id: dict[str, Any],
                      auto_create: bool, config: Any) -> tuple[list[str], list[TopicInfo]]:
    """KafkaApis.handleTopicMetadataRequest's checks on the topics asked for: those without DESCRIBE are
    answered TOPIC_AUTHORIZATION_FAILED without being looked up (by name: no id, so whether they exist is
    not revealed; by id: the id, which Kafka does not count as secret); those that would be auto-created
    need CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED too."""
    allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    refused = [TopicInfo(None, by_id[n], 0, False, int(ErrorCode.topic_authorization_failed)) if n in by_id
               else TopicInfo(n, ZERO_UUID, 0, False, int(ErrorCode.topic_authorization_failed))
               for n in dict.fromkeys(names) if n not in allowed]
    kept = [n for n in dict.fromkeys(names) if n in allowed]
    missing = [n for n in kept if topics.get(n) is None] if hasattr(topics, "get") else []
    if missing and auto_create and getattr(config, "auto_create_topics_enable", False):
        if not auth.authorize_cluster(ctx, AclOperation.CREATE, log_if_denied=False):
            creatable = auth.filter_authorized(ctx, AclOperation.CREATE, ResourceType.TOPIC, missing)
            for n in missing:
                if n not in creatable:
                    refused.append(TopicInfo(n, ZERO_UUID, 0, n.startswith("__"), int(ErrorCode.topic_authorization_failed)))
            kept = [n for n in kept if n not in missing or n in creatable]
    return kept, refused


def _response(identity: ClusterIdentity, infos: Sequence[Any], topic_ops: Sequence[int] | None = None,
              cluster_ops: int = AUTHORIZED_OPERATIONS_OMITTED) -> dict[str, Any]:
    node = identity.node_id
    topics = []
    for n, info in enumerate(infos):
        topics.append(
            {
                "error_code": info.error_code,
                "name": info.name,
                "topic_id": info.topic_id,
                "is_internal": info.is_internal,
                "topic_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED if topic_ops is None else topic_ops[n],
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
        "cluster_authorized_operations": cluster_ops,
    }
