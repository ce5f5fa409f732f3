"""ApiVersions, Metadata and DescribeCluster: what a client asks before anything else."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from groupcoord.protocol.encode import EncodedBody, encode_body
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.registry import ApiRegistry, response_class

from .cluster import ClusterIdentity
from .server.dispatch import Dispatcher, RequestContext

METADATA_CACHE_SIZE = 256
# KIP-511: software name/version must start and end with a letter or digit; inside, also '-' and '.'.
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?$")


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str | None
    topic_id: uuid.UUID
    partitions: int
    is_internal: bool = False
    error_code: int = 0


class TopicSource(Protocol):
    """What Metadata needs from the topic catalog (the data plane implements it)."""

    def describe(self, names: Sequence[str] | None, auto_create: bool) -> Any: ...


def api_versions_response(registry: ApiRegistry) -> dict[str, Any]:
    return {
        "error_code": 0,
        "throttle_time": 0,
        "api_keys": [
            {"api_key": r.api_key, "min_version": r.min_version, "max_version": r.max_version}
            for r in registry.ranges()
        ],
    }


class ClusterApis:
    def __init__(self, identity: ClusterIdentity, registry: ApiRegistry, topics: TopicSource) -> None:
        self.identity = identity
        self.registry = registry
        self.topics = topics
        self._api_versions_cache: dict[tuple[int, int, int], EncodedBody] = {}
        self._metadata_cache: dict[tuple[Any, ...], EncodedBody] = {}

    def register(self, dispatcher: Dispatcher) -> None:
        dispatcher.register(18, self.api_versions, 0, 4)
        dispatcher.register(3, self.metadata, 0, 13)
        dispatcher.register(60, self.describe_cluster, 0, 2)

    def api_versions(self, ctx: RequestContext, request: Any) -> EncodedBody:
        error = ErrorCode.none
        if ctx.api_version >= 3:
            name = request.client_software_name
            version = request.client_software_version
            if not _SOFTWARE.match(name or "") or not _SOFTWARE.match(version or ""):
                error = ErrorCode.invalid_request
        key = (ctx.api_version, error, self.registry.generation)
        body = self._api_versions_cache.get(key)
        if body is None:
            response = {**api_versions_response(self.registry), "error_code": error}
            body = EncodedBody(encode_body(response_class(18, ctx.api_version), response))
            self._api_versions_cache[key] = body
        return body

    def _broker(self) -> dict[str, Any]:
        i = self.identity
        return {"node_id": i.node_id, "host": i.host, "port": i.port, "rack": None, "broker_id": i.node_id, "is_fenced": False}

    async def metadata(self, ctx: RequestContext, request: Any) -> EncodedBody:
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
                found = self.topics.by_id(topic_id) if topic_id not in (None, ZERO_UUID) and hasattr(self.topics, "by_id") else None
                if found is not None:
                    names.append(found.name)
                else:
                    unknown_ids.append(TopicInfo(None, topic_id or ZERO_UUID, 0, False, int(ErrorCode.unknown_topic_id)))
        auto_create = bool(getattr(request, "allow_auto_topic_creation", True))
        infos = self.topics.describe(names, auto_create)
        if hasattr(infos, "__await__"):
            infos = await infos
        infos = list(infos) + unknown_ids
        # The answer depends only on the version and what the catalog said, so identical questions
        # (clients refresh metadata constantly) reuse one encoding.
        key = (ctx.api_version, tuple((i.name, i.topic_id, i.partitions, i.is_internal, i.error_code) for i in infos))
        body = self._metadata_cache.get(key)
        if body is None:
            body = EncodedBody(encode_body(response_class(3, ctx.api_version), self._metadata_response(infos)))
            if len(self._metadata_cache) >= METADATA_CACHE_SIZE:
                self._metadata_cache.pop(next(iter(self._metadata_cache)))
            self._metadata_cache[key] = body
        return body

    def _metadata_response(self, infos: Sequence[Any]) -> dict[str, Any]:
        node = self.identity.node_id
        topics = []
        for info in infos:
            topics.append(
                {
                    "error_code": info.error_code,
                    "name": info.name,
                    "topic_id": info.topic_id,
                    "is_internal": info.is_internal,
                    "topic_authorized_operations": -2147483648,
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
            "brokers": [self._broker()],
            "cluster_id": self.identity.cluster_id,
            "controller_id": self.identity.controller_id,
            "topics": topics,
            "cluster_authorized_operations": -2147483648,
        }

    def describe_cluster(self, ctx: RequestContext, request: Any) -> dict[str, Any]:
        return {
            "throttle_time": 0,
            "error_code": 0,
            "error_message": None,
            "endpoint_type": 1,
            "cluster_id": self.identity.cluster_id,
            "controller_id": self.identity.controller_id,
            "brokers": [self._broker()],
            "cluster_authorized_operations": -2147483648,
        }
