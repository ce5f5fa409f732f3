"""A small asyncio Kafka protocol client for the admin commands.

It speaks only the wire protocol (no broker internals), so the same code administers groupcoord and a real
Kafka cluster. Each connection negotiates versions once with ApiVersions and then uses, per API, the highest
version that both the broker advertises and kio can encode — capped where a newer version changes the
request shape in a way the admin commands do not need (topic ids, batched coordinator lookups).
"""

from __future__ import annotations

import asyncio
import itertools
import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Mapping

from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map

from groupcoord.coordinator.security.sasl_client import SaslClientError
from groupcoord.coordinator.security.sasl_client import new_client as new_sasl_client
from groupcoord.protocol.errors import kafka_name
from groupcoord.protocol.framing import encode_frame
from groupcoord.protocol import registry
from groupcoord.protocol.build import build
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.headers import encode_request_header, parse_response_header

from .client_security import ClientSecurity


DEFAULT_TIMEOUT_S = 10.0
DEFAULT_CLIENT_ID = "groupcoord-admin"


class ApiKey(IntEnum):
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DELETE_GROUPS = 42
    SASL_HANDSHAKE = 17
    SASL_AUTHENTICATE = 36
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    SHARE_GROUP_DESCRIBE = 77
    DESCRIBE_SHARE_GROUP_OFFSETS = 90


# Highest version the admin commands build requests for. Later versions switch to topic ids
# (OffsetFetch 10, OffsetCommit 10, Metadata 13) or batch coordinator keys (FindCoordinator 4+),
# which would only add code paths without adding information an operator needs.
VERSION_CAPS: dict[int, int] = {
    ApiKey.FIND_COORDINATOR: 3,
    ApiKey.OFFSET_FETCH: 7,
    ApiKey.OFFSET_COMMIT: 9,
    ApiKey.METADATA: 12,
    ApiKey.API_VERSIONS: 3,
}

_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")


class AdminError(Exception):
    """A failure the admin commands report to the operator as one line on stderr."""


class KafkaApiError(AdminError):
    """The broker answered with a non-zero error code."""

    def __init__(self, code: int, context: str, message: str | None = None) -> None:
        self.code = int(code)
        detail = f": {message}" if message else ""
        super().__init__(f"{context} failed with {kafka_name(self.code)} ({self.code}){detail}")


def check_error(code: Any, context: str, message: str | None = None) -> None:
    if int(code) != 0:
        raise KafkaApiError(int(code), context, message)


def kio_versions(api_key: int) -> tuple[int, int]:
    """The version range kio can encode for an API."""
    covered = registry.kio_versions(api_key)
    return covered.start, covered.stop - 1


def choose_version(api_key: int, broker_range: tuple[int, int] | None, cap: int | None = None) -> int:
    """Highest version both sides support; AdminError when the ranges do not overlap."""
    if broker_range is None:
        raise AdminError(f"broker does not support API {api_key} ({api_key_map.get(api_key, '?')})")
    client_low, kio_high = kio_versions(api_key)
    client_high = min(kio_high, VERSION_CAPS.get(api_key, kio_high) if cap is None else cap)
    low, high = max(client_low, broker_range[0]), min(client_high, broker_range[1])
    if high < low:
        raise AdminError(
            f"no common version for API {api_key_map[api_key]}: broker {broker_range[0]}..{broker_range[1]}, "
            f"client {client_low}..{client_high}"
        )
    return high


def encode_request(api_key: int, version: int, correlation_id: int, client_id: str | None, body: Any) -> bytes:
    """Request header v1 (v2 for flexible versions) followed by the kio-encoded body."""
    flexible = registry.is_flexible(api_key, version)
    return encode_request_header(api_key, version, correlation_id, client_id, flexible) + registry.encode_entity(body)


def decode_response(api_key: int, version: int, frame: bytes) -> tuple[int, Any]:
    """(correlation id, kio response entity) from one response frame."""
    correlation_id, pos = parse_response_header(frame, api_key, registry.is_flexible(api_key, version))
    entity, _size = registry.response_reader(api_key, version)(frame, pos)
    return correlation_id, entity


@dataclass
class BrokerConnection:
    """One TCP connection with its negotiated API versions; requests are sent one at a time."""

    host: str
    port: int
    client_id: str | None = DEFAULT_CLIENT_ID
    timeout: float = DEFAULT_TIMEOUT_S
    api_ranges: dict[int, tuple[int, int]] = field(default_factory=dict)
    _reader: asyncio.StreamReader | None = None
    _writer: asyncio.StreamWriter | None = None
    _correlation: Any = field(default_factory=lambda: itertools.count(1))
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @classmethod
    async def open(
        cls, host: str, port: int, *, client_id: str | None = DEFAULT_CLIENT_ID, timeout: float = DEFAULT_TIMEOUT_S,
        security: ClientSecurity | None = None,
    ) -> "BrokerConnection":
        """Connect (over TLS for SSL/SASL_SSL), negotiate versions, then authenticate (SASL_*), as Kafka's
        clients do: ApiVersions first, then SaslHandshake and SaslAuthenticate."""
        security = security or ClientSecurity()
        conn = cls(host, port, client_id, timeout)
        tls = security.ssl_context
        try:
            conn._reader, conn._writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=tls, server_hostname=host if tls is not None else None), timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            raise AdminError(f"cannot connect to {host}:{port}: {exc or 'timed out'}") from exc
        try:
            await conn._negotiate()
            if security.sasl:
                await conn._authenticate(security)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _authenticate(self, security: ClientSecurity) -> None:
        handshake = await self._roundtrip(ApiKey.SASL_HANDSHAKE, self.version_for(ApiKey.SASL_HANDSHAKE),
                                          {"mechanism": security.mechanism})
        check_error(handshake.error_code, f"SaslHandshake ({security.mechanism}; the broker enables "
                                          f"{', '.join(handshake.mechanisms) or 'none'})")
        client = new_sasl_client(security.mechanism, security.username or "", security.password or "")
        version = self.version_for(ApiKey.SASL_AUTHENTICATE)
        token: bytes | None = client.first()
        try:
            while token is not None:
                answer = await self._roundtrip(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": token})
                check_error(answer.error_code, "SASL authentication", answer.error_message)
                token = client.respond(bytes(answer.auth_bytes))
        except SaslClientError as exc:
            raise AdminError(f"SASL authentication with {self.host}:{self.port}: {exc}") from None

    @property
    def is_open(self) -> bool:
        return self._writer is not None

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
            self._writer = None

    def version_for(self, api_key: int, cap: int | None = None) -> int:
        return choose_version(api_key, self.api_ranges.get(api_key), cap)

    async def request(self, api_key: int, body: Mapping[str, Any], *, cap: int | None = None) -> tuple[int, Any]:
        """Send `body` (a version-neutral dict) at the negotiated version; returns (version, response)."""
        version = self.version_for(api_key, cap)
        response = await self._roundtrip(api_key, version, body)
        return version, response

    async def _negotiate(self) -> None:
        """ApiVersions at our highest version; a broker that does not know it answers v0 with its own range."""
        version = VERSION_CAPS[ApiKey.API_VERSIONS]
        body = {"client_software_name": "groupcoord-admin", "client_software_version": "0.1.0"}
        frame = await self._exchange(ApiKey.API_VERSIONS, version, body)
        (error_code,) = _INT16.unpack_from(frame, 4)
        if error_code == ErrorCode.unsupported_version:
            _, fallback = decode_response(ApiKey.API_VERSIONS, 0, frame)
            ranges = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in fallback.api_keys}
            version = choose_version(ApiKey.API_VERSIONS, ranges.get(ApiKey.API_VERSIONS, (0, 0)))
            frame = await self._exchange(ApiKey.API_VERSIONS, version, body)
        _, response = decode_response(ApiKey.API_VERSIONS, version, frame)
        check_error(response.error_code, f"ApiVersions to {self.host}:{self.port}")
        self.api_ranges = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}

    async def _roundtrip(self, api_key: int, version: int, body: Mapping[str, Any]) -> Any:
        frame = await self._exchange(api_key, version, body)
        return decode_response(api_key, version, frame)[1]

    async def _exchange(self, api_key: int, version: int, body: Mapping[str, Any]) -> bytes:
        if self._writer is None or self._reader is None:
            raise AdminError(f"connection to {self.host}:{self.port} is closed")
        entity = build(registry.request_class(api_key, version), body, fill_missing=True)
        async with self._lock:
            correlation_id = next(self._correlation)
            payload = encode_request(api_key, version, correlation_id, self.client_id, entity)
            try:
                self._writer.write(encode_frame(payload))
                frame = await asyncio.wait_for(self._read_frame(), self.timeout)
            except asyncio.TimeoutError as exc:
                await self.close()
                raise AdminError(
                    f"{api_key_map[api_key]} to {self.host}:{self.port} timed out after {self.timeout:g}s"
                ) from exc
            except (OSError, asyncio.IncompleteReadError) as exc:
                await self.close()
                raise AdminError(f"connection to {self.host}:{self.port} lost: {exc}") from exc
        (answered,) = _INT32.unpack_from(frame, 0)
        if answered != correlation_id:
            await self.close()
            raise AdminError(f"correlation id mismatch from {self.host}:{self.port}: sent {correlation_id}, got {answered}")
        return frame

    async def _read_frame(self) -> bytes:
        assert self._reader is not None and self._writer is not None
        await self._writer.drain()
        (size,) = _INT32.unpack(await self._reader.readexactly(4))
        return await self._reader.readexactly(size)


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """`host:port[,host:port...]` as Kafka tools accept it."""
    servers = []
    for item in bootstrap.split(","):
        item = item.strip()
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise AdminError(f"bad bootstrap server {item!r}: expected HOST:PORT")
        servers.append((host.strip("[]"), int(port)))
    return servers


@frozen_dataclass(slots=False)
class PartitionMetadata:
    partition: int
    leader: int
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()


@frozen_dataclass(slots=False)
class TopicMetadata:
    name: str
    error_code: int
    partitions: dict[int, PartitionMetadata]
    is_internal: bool = False


@frozen_dataclass(slots=False)
class ClusterMetadata:
    brokers: dict[int, tuple[str, int]]
    topics: dict[str, TopicMetadata]
    controller_id: int = -1


_COORDINATOR_RETRY = {
    ErrorCode.coordinator_not_available,
    ErrorCode.coordinator_load_in_progress,
    ErrorCode.not_coordinator,
}


class AdminClient:
    """Routes requests to the right broker: bootstrap, partition leaders, group coordinators."""

    def __init__(self, bootstrap: str, *, client_id: str = DEFAULT_CLIENT_ID, timeout: float = DEFAULT_TIMEOUT_S,
                 security: ClientSecurity | None = None):
        self._servers = parse_bootstrap(bootstrap)
        self.client_id = client_id
        self.timeout = timeout
        self.security = security or ClientSecurity()
        self._connections: dict[tuple[str, int], BrokerConnection] = {}
        self._brokers: dict[int, tuple[str, int]] = {}

    async def __aenter__(self) -> "AdminClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        for conn in connections:
            await conn.close()

    async def connection(self, address: tuple[str, int] | None = None) -> BrokerConnection:
        """A live connection to `address`, or to the first reachable bootstrap server."""
        candidates = [address] if address is not None else list(self._connections) + self._servers
        errors = []
        for candidate in candidates:
            conn = self._connections.get(candidate)
            if conn is not None and conn.is_open:
                return conn
            try:
                conn = await BrokerConnection.open(*candidate, client_id=self.client_id, timeout=self.timeout,
                                                   security=self.security)
            except AdminError as exc:
                errors.append(str(exc))
                continue
            self._connections[candidate] = conn
            return conn
        raise AdminError("; ".join(errors) or "no bootstrap servers")

    async def request(
        self, api_key: int, body: Mapping[str, Any], *, node: int | None = None, cap: int | None = None
    ) -> tuple[int, Any]:
        address = None if node is None else await self.broker_address(node)
        conn = await self.connection(address)
        return await conn.request(api_key, body, cap=cap)

    async def broker_address(self, node: int) -> tuple[str, int]:
        if node not in self._brokers:
            await self.metadata([])
        try:
            return self._brokers[node]
        except KeyError:
            raise AdminError(f"broker {node} is not in the cluster metadata") from None

    async def metadata(self, topics: list[str] | None = None) -> ClusterMetadata:
        """Cluster metadata; `topics=None` asks for every topic, `[]` for none."""
        conn = await self.connection()
        version = conn.version_for(ApiKey.METADATA)
        wanted = None if topics is None else [{"name": t} for t in topics]
        if wanted is None and version == 0:
            wanted = []  # v0 has no null: an empty list means every topic
        _, response = await conn.request(
            ApiKey.METADATA, {"topics": wanted, "allow_auto_topic_creation": False}
        )
        brokers = {int(b.node_id): (b.host, int(b.port)) for b in response.brokers}
        self._brokers.update(brokers)
        result = {}
        for topic in response.topics:
            partitions = {
                int(p.partition_index): PartitionMetadata(
                    int(p.partition_index),
                    int(p.leader_id),
                    tuple(int(r) for r in p.replica_nodes),
                    tuple(int(r) for r in getattr(p, "isr_nodes", ())),
                )
                for p in topic.partitions
            }
            result[topic.name] = TopicMetadata(
                topic.name, int(topic.error_code), partitions, bool(getattr(topic, "is_internal", False))
            )
        return ClusterMetadata(brokers, result, int(getattr(response, "controller_id", -1)))

    async def find_coordinator(self, group_id: str) -> int:
        """Node id of the group's coordinator, retrying while it is loading or moving."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        while True:
            _, response = await self.request(ApiKey.FIND_COORDINATOR, {"key": group_id, "key_type": 0})
            code = int(response.error_code)
            if code == 0:
                node = int(response.node_id)
                self._brokers[node] = (response.host, int(response.port))
                return node
            if code not in _COORDINATOR_RETRY or asyncio.get_running_loop().time() > deadline:
                check_error(code, f"FindCoordinator for group {group_id!r}", getattr(response, "error_message", None))
            await asyncio.sleep(0.1)

    async def group_request(
        self, group_id: str, api_key: int, body: Mapping[str, Any], *, cap: int | None = None
    ) -> tuple[int, Any]:
        """Send a request to the group's coordinator."""
        node = await self.find_coordinator(group_id)
        return await self.request(api_key, body, node=node, cap=cap)
