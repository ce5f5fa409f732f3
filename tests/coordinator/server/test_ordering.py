"""A connection answers in request order even while a handler is parked, and keeps serving the requests
behind it meanwhile (as a Kafka client pipelining a JoinGroup and its heartbeats expects)."""

import asyncio

from groupcoord.coordinator.server.dispatch import NO_RESPONSE

from .parking import API_VERSIONS, HEARTBEAT, park_heartbeats_and_count_api_versions

HB_BODY = {"group_id": "g", "generation_id": 1, "member_id": "m"}


async def test_answers_leave_in_request_order_while_the_first_request_is_parked(make_server, connect):
    release = asyncio.Event()
    served_behind_the_parked_one = []

    def register(dispatcher):
        park_heartbeats_and_count_api_versions(dispatcher, release, served_behind_the_parked_one)

    server, _ = await make_server(register)
    client = await connect(server.address)
    first = client.send(HEARTBEAT, 4, HB_BODY)
    behind = [client.send(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}) for _ in range(3)]
    await client.writer.drain()

    for _ in range(100):
        if len(served_behind_the_parked_one) == 3:
            break
        await asyncio.sleep(0.01)
    assert served_behind_the_parked_one == behind, "requests behind a parked one must still be served"
    try:
        await client.receive(HEARTBEAT, 4, timeout=0.2)
        raise AssertionError("an answer overtook the parked request")
    except asyncio.TimeoutError:
        pass

    release.set()
    correlation, heartbeat = await client.receive(HEARTBEAT, 4)
    assert correlation == first and heartbeat.error_code == 0
    for expected in behind:
        correlation, _ = await client.receive(API_VERSIONS, 3)
        assert correlation == expected


async def test_a_request_that_gets_no_response_does_not_block_the_ones_behind_it(make_server, connect):
    def register(dispatcher):
        dispatcher.register(HEARTBEAT, lambda ctx, req: NO_RESPONSE, 0, 4)

    server, _ = await make_server(register)
    client = await connect(server.address)
    client.send(HEARTBEAT, 4, HB_BODY)
    expected = client.send(API_VERSIONS, 0, {})
    correlation, answer = await client.receive(API_VERSIONS, 0)
    assert correlation == expected and answer.error_code == 0


async def test_a_failing_handler_answers_unknown_server_error_and_the_connection_lives_on(make_server, connect):
    def boom(ctx, request):
        raise RuntimeError("handler bug")

    server, _ = await make_server(lambda d: d.register(HEARTBEAT, boom, 0, 4))
    client = await connect(server.address)
    client.send(HEARTBEAT, 4, HB_BODY)
    _, answer = await client.receive(HEARTBEAT, 4)
    assert answer.error_code == -1
    client.send(API_VERSIONS, 0, {})
    _, answer = await client.receive(API_VERSIONS, 0)
    assert answer.error_code == 0


async def test_reading_pauses_while_too_many_answers_are_owed_and_resumes_after(make_server, connect):
    release = asyncio.Event()

    async def parked(ctx, request):
        await release.wait()
        return {"throttle_time": 0, "error_code": 0}

    server, _ = await make_server(lambda d: d.register(HEARTBEAT, parked, 0, 4), connection_max_inflight_requests=8)
    client = await connect(server.address)
    for _ in range(20):
        client.send(HEARTBEAT, 4, HB_BODY)
    await client.writer.drain()
    for _ in range(100):
        conn = next(iter(server.connections))
        if conn.reading_paused:
            break
        await asyncio.sleep(0.01)
    assert conn.reading_paused
    release.set()
    for _ in range(20):
        _, answer = await client.receive(HEARTBEAT, 4)
        assert answer.error_code == 0
    assert not conn.reading_paused
