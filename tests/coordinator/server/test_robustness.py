"""Bad input closes the offending connection with a log line; the server and every other connection
carry on. The fuzz test throws random and mutated frames at a live server, then checks that a fresh
client still gets a correct ApiVersions answer."""

import asyncio
import random
import struct

from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class

from .conftest import AsyncWire

API_VERSIONS = 18


async def _closed_by_server(client: AsyncWire, timeout: float = 2.0) -> bool:
    try:
        data = await asyncio.wait_for(client.reader.read(1), timeout)
    except (ConnectionError, asyncio.IncompleteReadError):
        return True
    return data == b""


async def _api_versions_ok(address: str) -> bool:
    host, _, port = address.rpartition(":")
    client = AsyncWire(*await asyncio.open_connection(host, int(port)))
    try:
        client.send(API_VERSIONS, 3, {"client_software_name": "probe", "client_software_version": "1.0"})
        _, answer = await client.receive(API_VERSIONS, 3)
        keys = {k.api_key for k in answer.api_keys}
        return answer.error_code == 0 and {3, 18, 60} <= keys
    finally:
        await client.close()


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


async def test_oversized_frame_closes_only_that_connection(make_server, connect):
    server, _ = await make_server(socket_request_max_bytes=1024)
    bystander = await connect(server.address)
    bad = await connect(server.address)
    bad.writer.write(struct.pack(">i", 10**9))
    assert await _closed_by_server(bad)
    bystander.send(API_VERSIONS, 0, {})
    _, answer = await bystander.receive(API_VERSIONS, 0)
    assert answer.error_code == 0


async def test_unknown_api_key_closes_the_connection(make_server, connect):
    server, _ = await make_server()
    client = await connect(server.address)
    client.writer.write(_frame(struct.pack(">hhih", 999, 0, 1, -1)))
    assert await _closed_by_server(client)
    assert await _api_versions_ok(server.address)


async def test_undecodable_body_closes_the_connection(make_server, connect):
    server, _ = await make_server()
    client = await connect(server.address)
    header = encode_request_header(3, 12, 1, "x", True)
    client.writer.write(_frame(header + b"\x05\xff\xff\xff"))  # topics array claims entries that are not there
    assert await _closed_by_server(client)
    assert await _api_versions_ok(server.address)


async def test_truncated_frame_then_hang_up_leaves_the_server_healthy(make_server, connect):
    server, _ = await make_server()
    client = await connect(server.address)
    client.writer.write(struct.pack(">i", 100) + b"\x00\x12")
    await client.writer.drain()
    await client.close()
    await asyncio.sleep(0.05)
    assert await _api_versions_ok(server.address)


async def test_unsupported_api_versions_version_gets_the_v0_fallback(make_server, connect):
    server, _ = await make_server()
    client = await connect(server.address)
    # ApiVersions v9: header v2, body unknown to us; the answer must be a v0 body with a v0 header.
    header = encode_request_header(API_VERSIONS, 9, 42, "future-client", True)
    client.writer.write(_frame(header + b"\x00\x00\x00"))
    _, answer = await client.receive(API_VERSIONS, 0)
    assert answer.error_code == 35  # UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == [(18, 0, 4)]


async def test_unsupported_version_of_another_api_answers_unsupported_version(make_server, connect):
    async def heartbeat(ctx, request):
        return {"throttle_time": 0, "error_code": 0}

    server, _ = await make_server(lambda d: d.register(12, heartbeat, 1, 4))
    client = await connect(server.address)
    client.send(12, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"})
    _, answer = await client.receive(12, 0)
    assert answer.error_code == 35


async def test_max_connections_refuses_the_extra_connection(make_server, connect):
    server, _ = await make_server(max_connections=2)
    a = await connect(server.address)
    b = await connect(server.address)
    c = await connect(server.address)
    assert await _closed_by_server(c)
    for client in (a, b):
        client.send(API_VERSIONS, 0, {})
        _, answer = await client.receive(API_VERSIONS, 0)
        assert answer.error_code == 0


def _valid_request(api_key: int, version: int, body: dict) -> bytes:
    header = encode_request_header(api_key, version, 7, "fuzz", is_flexible(api_key, version))
    return header + encode_entity(build(request_class(api_key, version), body))


SEEDS = [
    _valid_request(18, 3, {"client_software_name": "a", "client_software_version": "1"}),
    _valid_request(3, 12, {"topics": [{"name": "t", "topic_id": None}], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}),
    _valid_request(3, 1, {"topics": None}),
    _valid_request(60, 0, {"include_cluster_authorized_operations": False}),
]


@st.composite
def hostile_streams(draw):
    """Random bytes, or valid frames with mutated bytes, truncations, and lying length prefixes."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["random", "mutated", "lying-length"]))
        if kind == "random":
            parts.append(draw(st.binary(max_size=64)))
        elif kind == "mutated":
            payload = bytearray(draw(st.sampled_from(SEEDS)))
            rnd = random.Random(draw(st.integers(0, 2**32)))
            for _ in range(draw(st.integers(1, 6))):
                payload[rnd.randrange(len(payload))] = rnd.randrange(256)
            cut = draw(st.integers(8, len(payload)))
            parts.append(_frame(bytes(payload[:cut])))
        else:
            payload = draw(st.sampled_from(SEEDS))
            parts.append(struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1))) + payload)
    return b"".join(parts)


async def test_fuzzed_frames_never_take_the_server_down(make_server):
    server, _ = await make_server(socket_request_max_bytes=1 << 20)
    host, _, port = server.address.rpartition(":")
    streams = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hostile_streams())
    def collect(stream):
        streams.append(stream)

    collect()
    for stream in streams:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(stream)
        try:
            await writer.drain()
            await asyncio.wait_for(reader.read(65536), 0.05)
        except (asyncio.TimeoutError, ConnectionError):
            pass
        writer.close()
    assert len(streams) >= 100
    assert await _api_versions_ok(server.address)
