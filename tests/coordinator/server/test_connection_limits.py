"""Connections are bounded as Kafka bounds them, so idle and slow-loris clients cannot lock others out:
connections.max.idle.ms, socket.request.read.timeout.ms (a frame that never completes),
max.connections.per.ip and max.connections. Small limits keep every test under a second or two."""

import asyncio
import socket
import struct
import time

import structlog
import structlog.testing

from groupcoord.coordinator.metrics import BrokerMetrics

from .conftest import AsyncWire

API_VERSIONS = 18


async def _closed_by_server(reader: asyncio.StreamReader, timeout: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), timeout) == b""
    except ConnectionError:
        return True
    except asyncio.TimeoutError:
        return False


async def _open(address: str, source: str | None = None) -> AsyncWire:
    host, _, port = address.rpartition(":")
    return AsyncWire(*await asyncio.open_connection(host, int(port), local_addr=(source, 0) if source else None))


async def _answered(address: str, source: str, timeout: float = 2.0) -> float:
    """Seconds for a new client from ``source`` to connect and get its ApiVersions answer."""
    t0 = time.perf_counter()
    client = await asyncio.wait_for(_open(address, source), timeout)
    try:
        client.send(API_VERSIONS, 3, {"client_software_name": "probe", "client_software_version": "1"})
        _, answer = await client.receive(API_VERSIONS, 3, timeout=timeout)
        assert answer.error_code == 0
        return time.perf_counter() - t0
    finally:
        await client.close()


def _half_frame() -> bytes:
    """The size prefix and first bytes of an ApiVersions request that is never finished."""
    return struct.pack(">ihhi", 100, API_VERSIONS, 3, 1)


async def test_an_idle_connection_is_closed_after_connections_max_idle_ms(make_server, connect):
    server, _ = await make_server(connections_max_idle_ms=300)
    idle = await connect(server.address)
    busy = await connect(server.address)
    t0 = time.perf_counter()
    for _ in range(6):  # a request every 100 ms keeps `busy` open past the idle deadline
        busy.send(API_VERSIONS, 0, {})
        await busy.receive(API_VERSIONS, 0)
        await asyncio.sleep(0.1)
    assert await _closed_by_server(idle.reader, 2.0)
    assert 0.3 <= time.perf_counter() - t0 < 2.0
    busy.send(API_VERSIONS, 0, {})
    assert (await busy.receive(API_VERSIONS, 0))[1].error_code == 0


async def test_a_parked_request_is_not_idleness(make_server, connect):
    async def park(ctx, request):
        await asyncio.sleep(0.6)
        return {"throttle_time": 0, "error_code": 0}

    server, _ = await make_server(lambda d: d.register(12, park, 0, 4), connections_max_idle_ms=200)
    client = await connect(server.address)
    client.send(12, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"})
    _, answer = await client.receive(12, 0, timeout=3)
    assert answer.error_code == 0


async def test_a_frame_trickled_byte_by_byte_is_cut_off_by_socket_request_read_timeout_ms(make_server, connect):
    server, _ = await make_server(socket_request_read_timeout_ms=400, connections_max_idle_ms=60_000)
    loris = await connect(server.address)
    t0 = time.perf_counter()
    closed = False
    for byte in _half_frame() * 10:  # one byte every 50 ms: never idle, never a whole frame
        loris.writer.write(bytes([byte]))
        if await _closed_by_server(loris.reader, 0.05):
            closed = True
            break
    assert closed, "the slow-loris connection was still open after 4 s"
    assert 0.4 <= time.perf_counter() - t0 < 2.0
    assert await _answered(server.address, "127.0.0.1") < 1.0


async def test_max_connections_per_ip_refuses_one_address_not_the_others(make_server):
    metrics = BrokerMetrics()
    server, _ = await make_server(max_connections_per_ip=3)
    server.observer = metrics
    held = [await _open(server.address, "127.0.0.1") for _ in range(3)]
    extra = await _open(server.address, "127.0.0.1")
    assert await _closed_by_server(extra.reader, 2.0)
    assert await _answered(server.address, "127.0.0.2") < 1.0
    assert metrics.connections_refused.value("max.connections.per.ip") == 1
    for client in held + [extra]:
        await client.close()


async def test_idle_and_slow_loris_connections_do_not_lock_out_a_new_client(make_server):
    """At max.connections 60: 50 idle and 50 slow-loris connections from 127.0.0.1 (those past
    max.connections.per.ip 50 are refused), and a client from 127.0.0.2 is still answered at once; once
    the deadlines have closed them, 127.0.0.1 is served again too."""
    metrics = BrokerMetrics()
    server, _ = await make_server(max_connections=60, max_connections_per_ip=50, connections_max_idle_ms=500,
                                  socket_request_read_timeout_ms=500)
    server.observer = metrics
    idle = [await _open(server.address, "127.0.0.1") for _ in range(50)]
    loris = [await _open(server.address, "127.0.0.1") for _ in range(50)]
    for client in loris:
        client.writer.write(_half_frame())
    latency = await _answered(server.address, "127.0.0.2")
    assert latency < 1.0
    refused = sum([await _closed_by_server(c.reader, 0.5) for c in loris])
    assert refused == 50
    assert metrics.connections_refused.value("max.connections.per.ip") == 50
    assert all([await _closed_by_server(c.reader, 2.0) for c in idle])  # connections.max.idle.ms
    assert metrics.connections_expired.value("connections.max.idle.ms") == 50
    assert await _answered(server.address, "127.0.0.1") < 1.0
    assert len(server.connections) == 0 or all(c.peer == "127.0.0.1" for c in server.connections)
    for client in idle + loris:
        await client.close()


async def test_slow_loris_connections_are_closed_and_counted(make_server):
    metrics = BrokerMetrics()
    server, _ = await make_server(max_connections=20, connections_max_idle_ms=60_000,
                                  socket_request_read_timeout_ms=300)
    server.observer = metrics
    loris = [await _open(server.address, "127.0.0.1") for _ in range(20)]
    for client in loris:
        client.writer.write(_half_frame())
    assert all([await _closed_by_server(c.reader, 2.0) for c in loris])
    assert metrics.connections_expired.value("socket.request.read.timeout.ms") == 20
    assert await _answered(server.address, "127.0.0.1") < 1.0
    for client in loris:
        await client.close()


async def test_refusals_are_logged_once_per_burst(make_server):
    server, _ = await make_server(max_connections=2)
    held = [await _open(server.address) for _ in range(2)]
    with structlog.testing.capture_logs() as logs:
        refused = [await _open(server.address) for _ in range(30)]
        assert all([await _closed_by_server(c.reader, 2.0) for c in refused])
    assert [e["event"] for e in logs] == ["connection refused: max.connections reached"]
    for client in held + refused:
        await client.close()


def test_a_raw_socket_source_address_is_usable():
    """127.0.0.2 is loopback on Linux; the tests above rely on it for "another client"."""
    with socket.socket() as s:
        s.bind(("127.0.0.2", 0))


async def test_a_closed_connection_stops_its_parked_coroutines(make_server, connect):
    """A long-poll parked for a client that has gone would otherwise hold its purgatory slot (and memory)
    until the deadline the client chose, which may be days."""
    parked, cancelled = asyncio.Event(), asyncio.Event()

    async def long_poll(ctx, request):
        parked.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"throttle_time": 0, "error_code": 0}

    server, _ = await make_server(lambda d: d.register(12, long_poll, 0, 4))
    client = await connect(server.address)
    client.send(12, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"})
    await asyncio.wait_for(parked.wait(), 2)
    with structlog.testing.capture_logs() as logs:
        client.writer.close()
        await asyncio.wait_for(cancelled.wait(), 2)
        await asyncio.sleep(0.05)
    assert not [e for e in logs if e["log_level"] in ("warning", "error")], logs  # abandoned, not failed
