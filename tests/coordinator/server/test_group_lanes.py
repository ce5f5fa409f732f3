"""The JoinGroup and SyncGroup lanes answer byte for byte as the handler does, in request order.

A broker with its lanes (the default) and one with every request through kio's reader, the handler and the
schema encoder are sent the same requests over the connection code itself: a group forming (the member-id
round, joins parked until the join phase ends, the leader's and a follower's SyncGroup), a rejoin, the
errors (unknown member, wrong generation, an empty group id, inconsistent protocols), a static member (left to
the handler), and pipelined reads mixing laned requests with ordinary ones and with heartbeats. Member ids are
made the same on both brokers, so every answer is compared whole.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from bench.hotpath_bench import connect
from bench.requests import encode
from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.classic.responses import join_error
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import JOIN_GROUP, SYNC_GROUP
from tests.coordinator.server.test_fast_codecs_vs_general_path import (
    RecordingTransport, answers_in_order, group_scenario, ids, send, split_frames, start,
)

pytestmark = pytest.mark.asyncio

PROTOCOLS = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"}]


def count_group_lanes(broker: Broker) -> dict[str, int]:
    """Wraps the broker's JoinGroup and SyncGroup lanes to count the requests they take, by API name."""
    taken = {"JoinGroup": 0, "SyncGroup": 0}
    lanes = broker.dispatcher.deferred_lanes
    for key, (answer, name) in list(lanes.items()):
        if name not in taken:
            continue

        def counted(conn, data, start, end, answer=answer, name=name):
            result = answer(conn, data, start, end)
            taken[name] += bool(result)
            return result

        lanes[key] = (counted, name)
    return taken


async def on_both(scenario) -> tuple[list[bytes], dict[str, int], list[bytes]]:
    """The scenario against a broker with lanes and one without (nor fast codecs): (the first's answers, what
    its group lanes took, the other's answers)."""
    fast, general = await start(True), await start(False)
    try:
        taken = count_group_lanes(fast)
        assert not general.dispatcher.deferred_lanes
        with_lanes = await scenario(fast)
        without = await scenario(general)
    finally:
        await fast.stop()
        await general.stop()
    return with_lanes, taken, without


def assert_same(with_lanes: list[bytes], without: list[bytes]) -> None:
    assert len(with_lanes) == len(without)
    for i, (a, b) in enumerate(zip(with_lanes, without)):
        assert a == b, f"answer {i} differs"


def join(group: str, member: str, instance: str | None = None, reason: str | None = None) -> dict:
    return {"group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": member,
            "group_instance_id": instance, "protocol_type": "consumer", "protocols": PROTOCOLS, "reason": reason}


def sync(group: str, generation: int, member: str, assignments: list[tuple[str, bytes]],
         instance: str | None = None) -> dict:
    return {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": instance,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]}


async def test_a_group_forming_through_the_lanes_is_answered_as_by_the_handler():
    """Every JoinGroup and SyncGroup version the lanes serve (v7-v9, v4-v5), and those below left to the
    handler (JoinGroup v6), through the scenario of the fast-codec tests."""
    with_lanes, taken, without = await on_both(group_scenario)
    assert_same(with_lanes, without)
    # group_scenario sends 10 JoinGroups (one of them a static member's) and 6 SyncGroups per JoinGroup
    # version (6-9): the static member's and v6's are the handler's.
    assert taken == {"JoinGroup": 3 * 9, "SyncGroup": 4 * 6}


async def pipelined_scenario(broker: Broker) -> list[bytes]:
    """Two members on two connections, each read carrying several requests: laned joins answered at once
    (MEMBER_ID_REQUIRED) ahead of and behind ordinary requests (a heartbeat, a static member's join, an
    unknown member's sync, JoinGroup v6), a join parked until the other member's arrives with a heartbeat
    pipelined behind it (answered after it, in request order), the leader's sync with the follower's parked
    behind it, and the errors. Every answer of both connections, in order."""
    for shard in broker.groups.shards():
        shard.state.new_member_id = ids("member")
    corr = itertools.count(700)
    conns = []
    for _ in range(2):
        conn, counting = connect(broker)
        transport = RecordingTransport(counting)
        conn.transport = transport
        conns.append((conn, transport))
    (a, ta), (b, tb) = conns

    def req(api_key: int, version: int, body: dict) -> bytes:
        return encode(api_key, version, body, next(corr))

    def beat(member: str, generation: int) -> bytes:
        return req(12, 4, {"group_id": "p", "generation_id": generation, "member_id": member,
                           "group_instance_id": None})

    answers: list[bytes] = []
    # Member ids are handed out in order: member-1 for the first MEMBER_ID_REQUIRED, and so on.
    answers += await answers_in_order(a, ta, [
        req(11, 9, join("p", "")) + beat("nobody", 1) + req(11, 8, join("p", "", reason="r"))
        + req(14, 5, sync("p", 1, "stranger", [])) + req(11, 9, join("s", "", instance="i-1"))
        + req(11, 6, join("q", "")) + req(11, 7, join("", ""))], 7, polls=1000)
    # member-1 joins alone: the initial delay is 0, so the join phase ends on the shard's timer.
    answers += await answers_in_order(a, ta, [req(11, 9, join("p", "member-1")) + beat("member-1", 1)], 2,
                                      polls=1000)
    answers += await answers_in_order(a, ta, [req(14, 5, sync("p", 1, "member-1", [("member-1", b"\x01")]))
                                              + beat("member-1", 1)], 2, polls=1000)
    # member-2 (given its id above) joins: parked until member-1 rejoins; a heartbeat pipelined behind it.
    tb.data.clear()
    b.data_received(req(11, 9, join("p", "member-2")) + beat("member-2", 1))
    await asyncio.sleep(0.05)
    assert tb.data == b""  # the parked join holds the heartbeat's answer behind it
    answers += await answers_in_order(a, ta, [req(11, 9, join("p", "member-1")) + beat("member-1", 1)], 2,
                                      polls=1000)
    for _ in range(1000):
        if len(split_frames(bytes(tb.data))) >= 2:
            break
        await asyncio.sleep(0.001)
    answers += split_frames(bytes(tb.data))
    # The follower's sync parks until the leader's, pipelined with a heartbeat behind it.
    tb.data.clear()
    b.data_received(req(14, 4, {**sync("p", 2, "member-2", []), "protocol_type": None, "protocol_name": None})
                    + beat("member-2", 2))
    await asyncio.sleep(0.02)
    answers += await answers_in_order(a, ta, [req(14, 5, sync("p", 2, "member-1", [
        ("member-1", b"\x01"), ("member-2", b"\x02" * 50)])) + req(14, 5, sync("p", 3, "member-1", []))], 2,
        polls=1000)
    for _ in range(1000):
        if len(split_frames(bytes(tb.data))) >= 2:
            break
        await asyncio.sleep(0.001)
    answers += split_frames(bytes(tb.data))
    # Stable: a follower's rejoin with the same metadata is answered at once; unknown and wrong ones.
    answers += await answers_in_order(b, tb, [req(11, 9, join("p", "member-2")) + req(11, 9, join("p", "nobody"))
                                              + req(11, 9, {**join("p", "member-2"), "session_timeout": 1})], 3,
                                      polls=1000)
    return answers


async def test_pipelined_laned_and_ordinary_requests_are_answered_in_order_and_as_by_the_handler():
    with_lanes, taken, without = await on_both(pipelined_scenario)
    assert len(with_lanes) == 22
    assert_same(with_lanes, without)
    assert taken["JoinGroup"] == 9 and taken["SyncGroup"] == 5  # not the static join, v6, the lane's refusals


async def test_a_laned_answer_is_observed_with_its_error_when_it_is_given():
    """As the ordinary way observes an answer: its API, its top-level error, the time since the request was
    read (a parked join's includes the wait)."""
    broker = await start(True)
    observed: list[tuple[str, int, float]] = []

    class Recorder:
        def observe_request(self, api: str, error_code: int, seconds: float) -> None:
            observed.append((api, error_code, seconds))

    try:
        for shard in broker.groups.shards():
            shard.state.new_member_id = ids("member")
        taken = count_group_lanes(broker)
        broker.dispatcher.observer = Recorder()
        conn, counting = connect(broker)
        transport = RecordingTransport(counting)
        conn.transport = transport
        answers = await answers_in_order(conn, transport, [encode(11, 9, join("o", ""), 1)], 1, polls=1000)
        assert observed == [("JoinGroup", ErrorCode.member_id_required, observed[0][2])]
        assert answers == [JOIN_GROUP.write(9, 1, join_error("member-1", ErrorCode.member_id_required))]
        await answers_in_order(conn, transport, [encode(11, 9, join("o", "member-1"), 2)], 1, polls=1000)
        await answers_in_order(conn, transport, [encode(14, 5, sync("o", 1, "member-1", []), 3)], 1, polls=1000)
        assert [(api, error) for api, error, _ in observed] == [("JoinGroup", 79), ("JoinGroup", 0),
                                                               ("SyncGroup", 0)]
        assert taken == {"JoinGroup": 2, "SyncGroup": 1}
    finally:
        await broker.stop()


async def test_a_parked_laned_join_is_answered_with_its_error_when_the_shard_stops():
    """A join the shard holds (parked until the join phase ends) is answered as the handler's future would be
    when the coordinator stops first: COORDINATOR_NOT_AVAILABLE, for the member id it sent."""
    broker = Broker(group_initial_rebalance_delay_ms=60_000)
    await broker.start()
    stopped = False
    try:
        taken = count_group_lanes(broker)
        conn, counting = connect(broker)
        transport = RecordingTransport(counting)
        conn.transport = transport
        first = await answers_in_order(conn, transport, [encode(11, 9, join("held", ""), 1)], 1, polls=1000)
        from groupcoord.protocol.headers import parse_response_header
        from groupcoord.protocol.registry import response_reader

        raw = first[0][4:]
        _, pos = parse_response_header(raw, 11, True)
        member = response_reader(11, 9)(raw, pos)[0].member_id
        transport.data.clear()
        conn.data_received(encode(11, 9, join("held", member), 2))
        await asyncio.sleep(0.05)
        assert transport.data == b"" and taken["JoinGroup"] == 2  # parked in the initial delay
        await broker.groups.stop()
        stopped = True
        for _ in range(1000):
            if transport.data:
                break
            await asyncio.sleep(0.001)
        assert split_frames(bytes(transport.data)) == [
            JOIN_GROUP.write(9, 2, join_error(member, ErrorCode.coordinator_not_available))]
    finally:
        if not stopped:
            await broker.groups.stop()
        await broker.stop()


async def test_the_lanes_serve_the_versions_the_fast_codecs_read():
    broker = await start(True)
    try:
        lanes = {name: sorted(int.from_bytes(key[2:4], "big") for key, (_, n) in
                              broker.dispatcher.deferred_lanes.items() if n == name)
                 for name in ("JoinGroup", "SyncGroup")}
    finally:
        await broker.stop()
    assert lanes == {"JoinGroup": [7, 8, 9], "SyncGroup": list(SYNC_GROUP.versions)}
    assert set(lanes["JoinGroup"]) <= set(JOIN_GROUP.versions)


async def test_an_owed_answer_that_cannot_be_encoded_is_answered_as_a_failed_handler():
    """As the ordinary way answers an answer its encoders refuse (a bug): UNKNOWN_SERVER_ERROR, logged, and
    nothing raised into the group runtime that gave it."""
    from types import SimpleNamespace

    from groupcoord.coordinator.security.principal import ANONYMOUS
    from groupcoord.coordinator.server.dispatch import Decoded, Dispatcher, OwedAnswer, RequestContext

    dispatcher = Dispatcher()
    answered: list[bytes | None] = []

    class Slot:
        done = False

    class Connection:
        peer, id, principal, listener = "127.0.0.1", 4, ANONYMOUS, "PLAINTEXT"
        server = SimpleNamespace(dispatcher=dispatcher)

        def owe(self) -> Slot:
            return Slot()

        def answer_later(self, slot: Slot, payload: bytes | None) -> None:
            slot.done = True
            answered.append(payload)

    reply = OwedAnswer(Connection(), JOIN_GROUP, 9, 7, "client")
    assert not reply.done()
    reply.set_result({"no": "such answer"})
    assert reply.done()
    expected = dispatcher.encode_failure(Decoded(RequestContext(11, 9, 7, "client", "127.0.0.1", 4), None, None),
                                         ValueError("x"))
    assert answered == [expected]
