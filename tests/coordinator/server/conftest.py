import asyncio
import struct
import uuid
from typing import Any, Sequence

import pytest

from groupcoord.coordinator.cluster import ClusterIdentity
from groupcoord.coordinator.apis import api_versions, describe_cluster, metadata
from groupcoord.coordinator.apis.metadata import TopicInfo
from groupcoord.coordinator.apis.registry import register_apis
from groupcoord.coordinator.apis.services import Services
from groupcoord.protocol.names import OFFSETS_TOPIC, ZERO_UUID
from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.server.dispatch import Dispatcher
from groupcoord.coordinator.server.server import KafkaServer
from groupcoord.protocol.build import build
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.headers import encode_request_header, parse_response_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, response_reader


class InternalTopicsOnly:
    """A topic source for server tests that need no data plane: only `__consumer_offsets` exists."""

    def __init__(self, offsets_partitions: int) -> None:
        self.offsets = TopicInfo(OFFSETS_TOPIC, uuid.UUID(int=1), offsets_partitions, is_internal=True)

    def describe(self, names: Sequence[str] | None, auto_create: bool) -> list[TopicInfo]:
        if names is None:
            return [self.offsets]
        return [
            self.offsets
            if name == OFFSETS_TOPIC
            else TopicInfo(name, ZERO_UUID, 0, error_code=ErrorCode.unknown_topic_or_partition)
            for name in names
        ]


class AsyncWire:
    """Pipelining client over asyncio streams: send many requests, then read answers in order."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.correlation = 0

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> int:
        self.correlation += 1
        header = encode_request_header(api_key, version, self.correlation, "t", is_flexible(api_key, version))
        payload = header + encode_entity(build(request_class(api_key, version), body))
        self.writer.write(struct.pack(">i", len(payload)) + payload)
        return self.correlation

    async def receive(self, api_key: int, version: int, timeout: float = 5.0) -> tuple[int, Any]:
        size = struct.unpack(">i", await asyncio.wait_for(self.reader.readexactly(4), timeout))[0]
        frame = await asyncio.wait_for(self.reader.readexactly(size), timeout)
        correlation, pos = parse_response_header(frame, api_key, is_flexible(api_key, version))
        return correlation, response_reader(api_key, version)(frame, pos)[0]

    async def close(self) -> None:
        self.writer.close()


@pytest.fixture
async def make_server():
    servers: list[KafkaServer] = []

    async def start(register=None, **settings) -> tuple[KafkaServer, Dispatcher]:
        config = BrokerConfig().replace(listen="127.0.0.1:0", **settings)
        dispatcher = Dispatcher()
        server = KafkaServer(config, dispatcher)
        host, port = await server.start()
        identity = ClusterIdentity(1, host, port, "test-cluster")
        register_apis(dispatcher, Services(identity, dispatcher.registry, InternalTopicsOnly(50), None, None),
                      (api_versions, metadata, describe_cluster))
        if register is not None:
            register(dispatcher)
        server.address = f"{host}:{port}"
        servers.append(server)
        return server, dispatcher

    yield start
    for server in servers:
        await server.stop(drain_timeout=1)


@pytest.fixture
async def connect():
    clients: list[AsyncWire] = []

    async def open_client(address: str) -> AsyncWire:
        host, _, port = address.rpartition(":")
        client = AsyncWire(*await asyncio.open_connection(host, int(port)))
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.close()
