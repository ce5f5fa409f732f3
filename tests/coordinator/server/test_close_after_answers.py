"""A handler may answer nothing and have the connection closed (Kafka's closeConnection, used for a failed
acks=0 Produce): the answers owed to earlier requests still leave first, in order, even from a parked
handler; nothing behind the closing request is answered; other connections carry on."""

import asyncio

from groupcoord.coordinator.server.dispatch import CLOSE_CONNECTION

from .parking import API_VERSIONS, HEARTBEAT, park_heartbeats_and_count_api_versions
from .test_robustness import _api_versions_ok, _closed_by_server

LEAVE_GROUP = 13
HB_BODY = {"group_id": "g", "generation_id": 1, "member_id": "m"}
LEAVE_BODY = {"group_id": "g", "member_id": "m"}


async def _parking_heartbeats_and_closing_on_leave(make_server, release, served_after_close):
    """A server whose Heartbeat parks until ``release``, whose ApiVersions notes it was served, and whose
    LeaveGroup closes the connection."""

    def register(dispatcher):
        park_heartbeats_and_count_api_versions(dispatcher, release, served_after_close)
        dispatcher.register(LEAVE_GROUP, lambda ctx, request: CLOSE_CONNECTION, 0, 0)

    server, _ = await make_server(register)
    return server


async def test_the_connection_closes_after_the_answers_owed_before_it(make_server, connect):
    release = asyncio.Event()
    served_after_close = []

    server = await _parking_heartbeats_and_closing_on_leave(make_server, release, served_after_close)
    client = await connect(server.address)
    parked = client.send(HEARTBEAT, 4, HB_BODY)
    client.send(LEAVE_GROUP, 0, LEAVE_BODY)
    client.send(API_VERSIONS, 0, {})
    await client.writer.drain()

    try:
        await asyncio.wait_for(client.reader.read(1), 0.2)
        raise AssertionError("an answer or the close overtook the parked request")
    except asyncio.TimeoutError:
        pass
    release.set()
    correlation, heartbeat = await client.receive(HEARTBEAT, 4)
    assert (correlation, heartbeat.error_code) == (parked, 0)
    assert await _closed_by_server(client)
    assert served_after_close == []
    assert await _api_versions_ok(server.address)


async def test_a_connection_without_owed_answers_closes_at_once(make_server, connect):
    server, _ = await make_server(lambda d: d.register(LEAVE_GROUP, lambda ctx, request: CLOSE_CONNECTION, 0, 0))
    client = await connect(server.address)
    client.send(LEAVE_GROUP, 0, LEAVE_BODY)
    assert await _closed_by_server(client)
    assert not server.connections


async def test_a_client_that_hangs_up_behind_a_parked_request_is_let_go_at_once(make_server, connect):
    """Found by the 1M-frame fuzz run: a long-poll Fetch (max_wait 7 min) then a request the broker closes
    the connection for, then the client's EOF. The close waits for the parked answer, but the EOF must still
    end the connection (and abandon the parked request) instead of it hanging for minutes."""
    release = asyncio.Event()
    served_after_close = []

    server = await _parking_heartbeats_and_closing_on_leave(make_server, release, served_after_close)
    client = await connect(server.address)
    client.send(HEARTBEAT, 4, HB_BODY)
    client.send(LEAVE_GROUP, 0, LEAVE_BODY)
    await client.writer.drain()
    await asyncio.sleep(0.1)
    client.send(API_VERSIONS, 0, {})
    client.writer.write_eof()
    assert await asyncio.wait_for(client.reader.read(), 2.0) == b""  # closed, nothing answered
    await asyncio.sleep(0.05)
    assert not server.connections
    assert served_after_close == []
    release.set()
    assert await _api_versions_ok(server.address)
