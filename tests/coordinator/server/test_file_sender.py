"""Fetch answers sent with sendfile (coordinator/server/file_sender.py) against the same answers read and written.

Two servers share one data plane: one answers fetches with file regions sent straight to the socket, the
other as before. Every answer must be the same bytes, in request order, whatever the socket does meanwhile
(a full send buffer, a peer that goes away), and no descriptor may outlive the answer. Each scenario runs on
asyncio's loop and on uvloop's (the daemon's: its transports own their descriptors).
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
from typing import Any

import pytest
import uvloop

from groupcoord.coordinator.apis import api_versions
from groupcoord.coordinator.apis import fetch as fetch_api
from groupcoord.coordinator.apis.registry import register_apis
from groupcoord.coordinator.apis.services import Services
from groupcoord.coordinator.cluster import ClusterIdentity
from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData
from groupcoord.coordinator.dataplane.service import DataPlane
from groupcoord.coordinator.server import file_sender
from groupcoord.coordinator.server.dispatch import Dispatcher
from groupcoord.coordinator.server.server import KafkaServer
from groupcoord.protocol.build import build
from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.headers import encode_request_header
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from tests.support.descriptors import open_fds

LOOPS = pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, uvloop.new_event_loop],
                                ids=["asyncio", "uvloop"])
TOPIC = "records"
BIG = 3 * 1024 * 1024


async def settled_fds() -> int:
    """open_fds once the connections closed by either side are gone on the server's side too."""
    await asyncio.sleep(0.1)
    return open_fds()


def fetch_frame(correlation: int, parts: list[tuple[int, int, int]], max_bytes: int = 50 * 1024 * 1024,
                version: int = 12) -> bytes:
    body = {"cluster_id": None, "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": max_bytes,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": TOPIC, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": limit} for p, offset, limit in parts]}],
            "forgotten_topics_data": [], "rack_id": ""}
    header = encode_request_header(1, version, correlation, "t", is_flexible(1, version))
    payload = header + encode_entity(build(request_class(1, version), body))
    return struct.pack(">i", len(payload)) + payload


def api_versions_frame(correlation: int) -> bytes:
    header = encode_request_header(18, 3, correlation, "t", is_flexible(18, 3))
    payload = header + encode_entity(build(request_class(18, 3), {"client_software_name": "t",
                                                                  "client_software_version": "1"}))
    return struct.pack(">i", len(payload)) + payload


class Cluster:
    """One data plane; ``direct`` answers fetches with regions (sendfile), ``plain`` reads them."""

    def __init__(self, tmp_path: Any) -> None:
        self.config = BrokerConfig().replace(data_dir=str(tmp_path / "data"), listen="127.0.0.1:0")
        self.servers: list[KafkaServer] = []

    async def start(self) -> None:
        self.log_manager = LogManager(self.config.data_path, FsyncPolicy.NEVER,
                                      LogConfig.from_topic_configs({"segment.bytes": str(2 * 1024 * 1024)}))
        self.dataplane = DataPlane(self.config, self.log_manager)
        await self.dataplane.start()
        self.direct = await self._server(frozenset({"PLAINTEXT"}))
        self.plain = await self._server(frozenset())
        await self.dataplane.topics.create(TOPIC, 2)
        for i in range(120):  # ~6 MiB over three segments in partition 0, a little in partition 1
            records = encode_batch([(b"k%d" % j, bytes([i % 250]) * (500 + 37 * (i % 11)), ()) for j in range(90)],
                                   base_timestamp=1000 + i)
            await self.dataplane.produce.produce(acks=1, api_version=9, topics=[TopicData(TOPIC, (
                PartitionData(0, records),) + ((PartitionData(1, records),) if i % 10 == 0 else ()))])

    async def _server(self, sendfile_listeners: frozenset[str]) -> str:
        dispatcher = Dispatcher()
        server = KafkaServer(self.config, dispatcher)
        host, port = await server.start()
        services = Services(ClusterIdentity(1, host, port, "c"), dispatcher.registry, self.dataplane.topics, None,
                            self.dataplane, sendfile_listeners=sendfile_listeners)
        register_apis(dispatcher, services, (api_versions, fetch_api))
        self.servers.append(server)
        return f"{host}:{port}"

    def log(self, partition: int = 0) -> Any:
        return self.dataplane.topics.log(TOPIC, partition)

    async def stop(self) -> None:
        for server in self.servers:
            await server.stop(drain_timeout=1)
        await self.dataplane.stop()
        await self.log_manager.close()


async def connect(address: str, rcvbuf: int | None = None) -> socket.socket:
    host, _, port = address.rpartition(":")
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    return sock


async def read_exactly(sock: socket.socket, n: int, pause_s: float = 0.0, chunk: int = 1 << 20) -> bytes:
    loop = asyncio.get_running_loop()
    out = bytearray()
    deadline = time.monotonic() + 30
    while len(out) < n:
        assert time.monotonic() < deadline, f"only {len(out)} of {n} bytes in 30 s"
        got = await asyncio.wait_for(loop.sock_recv(sock, min(chunk, n - len(out))), 10)
        assert got, f"closed after {len(out)} of {n} bytes"
        out += got
        if pause_s:
            await asyncio.sleep(pause_s)
    return bytes(out)


async def read_frames(sock: socket.socket, count: int, pause_s: float = 0.0, chunk: int = 1 << 20) -> list[bytes]:
    frames = []
    for _ in range(count):
        size = struct.unpack(">i", await read_exactly(sock, 4))[0]
        frames.append(await read_exactly(sock, size, pause_s, chunk))
    return frames


async def answers(address: str, frames: list[bytes], **reading: Any) -> list[bytes]:
    sock = await connect(address, reading.pop("rcvbuf", None))
    try:
        await asyncio.get_running_loop().sock_sendall(sock, b"".join(frames))
        return await read_frames(sock, len(frames), **reading)
    finally:
        sock.close()


def run(loop_factory: Any, scenario: Any, tmp_path: Any) -> None:
    async def main() -> None:
        cluster = Cluster(tmp_path)
        await cluster.start()
        try:
            await scenario(cluster)
        finally:
            await cluster.stop()

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(main())


REQUESTS = [
    [(0, 0, 8 * 1024 * 1024)],                       # many batches across a segment boundary
    [(0, 0, 8 * 1024 * 1024), (1, 0, 8 * 1024 * 1024)],  # two partitions, the response's max bytes shared
    [(0, 333, 200_000)],                             # from the middle of a batch, a budget cutting a batch
    [(0, 5000, 1 << 20), (1, 0, 100)],               # the second partition: under min_one no longer
    [(0, 10_000, 1 << 20)],                          # past the high watermark: offset out of range
    [(0, 0, 10)],                                    # min_one: one batch over the budget
]


@LOOPS
def test_fetch_answers_sent_with_sendfile_are_the_bytes_of_answers_read(loop_factory, tmp_path):
    async def scenario(cluster: Cluster) -> None:
        frames = [fetch_frame(i, parts) for i, parts in enumerate(REQUESTS)]
        frames.insert(2, api_versions_frame(99))  # an ordinary answer between regions keeps its place
        frames.append(fetch_frame(100, [(0, 0, 8 * 1024 * 1024)], max_bytes=300_000))
        expected = await answers(cluster.plain, frames)
        before = await settled_fds()
        got = await answers(cluster.direct, frames)
        assert [len(f) for f in got] == [len(f) for f in expected]
        assert got == expected
        assert max(len(f) for f in got) > BIG
        assert await settled_fds() == before

    run(loop_factory, scenario, tmp_path)


@LOOPS
def test_a_full_socket_mid_region_waits_and_goes_on_in_order(loop_factory, tmp_path):
    """A tiny send buffer and a slow reader: the regions leave a little per writability, the answers queued
    behind (regions and bytes) follow in order, and the connection keeps serving afterwards."""
    async def scenario(cluster: Cluster) -> None:
        frames = [fetch_frame(1, REQUESTS[0]), api_versions_frame(2), fetch_frame(3, REQUESTS[1]),
                  fetch_frame(4, REQUESTS[2])]
        expected = await answers(cluster.plain, frames)
        before = await settled_fds()
        sock = await connect(cluster.direct, rcvbuf=4096)
        try:
            server = cluster.servers[0]
            while not server.connections:
                await asyncio.sleep(0.01)
            conn = next(iter(server.connections))
            conn.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            await asyncio.get_running_loop().sock_sendall(sock, b"".join(frames))
            got = await read_frames(sock, 2, pause_s=0.0005, chunk=64 * 1024)
            assert conn._sender is not None  # still sending the third answer's regions
            got += await read_frames(sock, 2)
            assert got == expected
            assert conn._sender is None and not conn.reading_paused
            await asyncio.get_running_loop().sock_sendall(sock, api_versions_frame(5))
            assert len(await read_frames(sock, 1)) == 1
        finally:
            sock.close()
        assert await settled_fds() == before

    run(loop_factory, scenario, tmp_path)


@LOOPS
@pytest.mark.parametrize("reset", [False, True], ids=["close", "reset"])
def test_the_peer_going_away_mid_send_closes_everything(loop_factory, reset, tmp_path):
    async def go_away(address: str, server: KafkaServer, sending: bool) -> Any:
        sock = await connect(address, rcvbuf=4096)
        await asyncio.get_running_loop().sock_sendall(sock, fetch_frame(1, REQUESTS[0]) * 3)
        await read_exactly(sock, 100_000)
        conn = next(iter(server.connections))
        assert (conn._sender is not None) == sending  # the direct server is mid-send
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        deadline = time.monotonic() + 10
        while server.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert not server.connections
        return conn

    async def scenario(cluster: Cluster) -> None:
        await go_away(cluster.plain, cluster.servers[1], False)  # (uvloop opens a descriptor of its own the first time)
        before = await settled_fds()
        conn = await go_away(cluster.direct, cluster.servers[0], True)
        assert conn._sender is None
        assert await settled_fds() == before
        again = await answers(cluster.direct, [fetch_frame(7, REQUESTS[2])])
        assert again == await answers(cluster.plain, [fetch_frame(7, REQUESTS[2])])

    run(loop_factory, scenario, tmp_path)


@LOOPS
def test_a_segment_deleted_while_its_region_waits_is_still_sent(loop_factory, tmp_path):
    """Segments deleted (PartitionLog.delete_segments, as retention and DeleteRecords delete them) while an
    answer's regions of them are still queued: the regions' own descriptors keep the unlinked files readable,
    and the answers are the bytes read before the deletion."""
    async def scenario(cluster: Cluster) -> None:
        frames = [fetch_frame(1, REQUESTS[0]), fetch_frame(2, REQUESTS[0])]
        expected = await answers(cluster.plain, frames)
        before = await settled_fds()
        sock = await connect(cluster.direct, rcvbuf=4096)
        try:
            await asyncio.get_running_loop().sock_sendall(sock, b"".join(frames))
            head = await read_exactly(sock, 4 + 64 * 1024)
            conn = next(iter(cluster.servers[0].connections))
            deadline = time.monotonic() + 10
            while (conn._sender is None or conn._sender.queued < len(expected[1])) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert conn._sender.queued > len(expected[1])  # both answers' regions are with the sender
            log = cluster.log()
            doomed = log.segments[:-1]
            await log.advance_log_start_offset(log.segments[-1].base_offset)  # deletes every segment before the active
            assert all(not s.log_path.exists() for s in doomed)
            rest = head[4:] + await read_exactly(sock, len(expected[0]) - len(head) + 4)
            got = [rest] + await read_frames(sock, 1)
            assert got == expected
        finally:
            sock.close()
        assert await settled_fds() <= before  # (the deleted segments' pool descriptors went too)

    run(loop_factory, scenario, tmp_path)


class FakeTransport:
    def __init__(self, buffered: int = 0) -> None:
        self.written: list[Any] = []
        self.buffered = buffered

    def writelines(self, pieces: list[Any]) -> None:
        self.written.extend(bytes(p) for p in pieces)

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def get_extra_info(self, name: str) -> Any:
        raise AssertionError("a connection that cannot send regions asked for its socket")


class FakeConnection:
    def __init__(self, transport: FakeTransport, tls: bool) -> None:
        self.transport = transport
        self.security = type("Security", (), {"ssl_context": object() if tls else None})() if tls else None


@pytest.mark.parametrize("tls, buffered", [(True, 0), (False, 10)], ids=["tls", "transport-buffering"])
def test_regions_are_read_where_the_bytes_cannot_go_as_they_are(tmp_path, tls, buffered):
    """TLS (the bytes are encrypted) or a transport still buffering an earlier answer: the regions are read and
    written through the transport, in place, and closed."""
    path = tmp_path / "segment"
    path.write_bytes(bytes(range(256)) * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        before = open_fds()
        region = FileRegion(os.dup(fd), 1000, 100_000)
        transport = FakeTransport(buffered)
        assert file_sender.write_pieces(FakeConnection(transport, tls), [b"head", region, b"tail"]) is None
        assert b"".join(transport.written) == b"head" + (bytes(range(256)) * 1000)[1000:101_000] + b"tail"
        assert region.closed and open_fds() == before
    finally:
        os.close(fd)


def test_only_listeners_without_tls_send_regions():
    from groupcoord.coordinator.server.listeners import Listener, SecurityProtocol

    def listener(protocol: SecurityProtocol) -> Listener:
        return Listener("L", protocol, "127.0.0.1", 0, "127.0.0.1", 0)

    assert file_sender.sends_regions(listener(SecurityProtocol.PLAINTEXT))
    assert file_sender.sends_regions(listener(SecurityProtocol.SASL_PLAINTEXT))
    assert not file_sender.sends_regions(listener(SecurityProtocol.SSL))
    assert not file_sender.sends_regions(listener(SecurityProtocol.SASL_SSL))
