"""A broker answers Heartbeat and OffsetCommit byte for byte the same with its fast codecs as without them.

Two embedded brokers, one with the hand-written codecs (the default) and one with every request through kio's
reader and the schema encoder, are sent the same requests in every served version — valid members and
commits, and the error cases (unknown group and member, wrong generation, unknown topic, a static member,
metadata too large) — over the connection code itself, and must send the same bytes back.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from bench.hotpath_bench import connect, roundtrip
from bench.requests import encode
from groupcoord.coordinator.broker import Broker
from groupcoord.protocol.fast_codecs import HEARTBEAT, JOIN_GROUP, OFFSET_COMMIT, SYNC_GROUP

pytestmark = pytest.mark.asyncio

TOPIC = "orders"


def ids(prefix: str):
    counter = itertools.count(1)
    return lambda client_id: f"{prefix}-{next(counter)}"


async def start(fast: bool) -> Broker:
    broker = Broker(group_initial_rebalance_delay_ms=0)
    await broker.start()
    if not fast:
        broker.dispatcher.disable_fast_codecs()
    return broker


async def send(conn, transport, api_key: int, version: int, body: dict, correlation_id: int) -> bytes:
    return await roundtrip(conn, transport, encode(api_key, version, body, correlation_id))


async def scenario(broker: Broker) -> list[bytes]:
    """Every answer of the scenario, in order. Member ids differ between brokers (they are random), so each
    broker's own are used, and only answers that carry none are compared."""
    conn, transport = connect(broker)
    answers: list[bytes] = []
    corr = itertools.count(100)
    await send(conn, transport, 19, 7, {"topics": [{"name": TOPIC, "num_partitions": 3, "replication_factor": 1,
                                                    "assignments": [], "configs": []}],
                                        "timeout": 10000, "validate_only": False}, next(corr))
    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]
    join = {"group_id": "g", "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": "",
            "group_instance_id": "static-1", "protocol_type": "consumer", "protocols": protocols, "reason": None}
    joined = await send(conn, transport, 11, 9, join, next(corr))
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    body = joined[4:]
    _, pos = parse_response_header(body, 11, True)
    member = response_reader(11, 9)(body, pos)[0]
    await send(conn, transport, 14, 5, {"group_id": "g", "generation_id": member.generation_id,
                                        "member_id": member.member_id, "group_instance_id": "static-1",
                                        "protocol_type": "consumer", "protocol_name": member.protocol_name,
                                        "assignments": [{"member_id": member.member_id, "assignment": b""}]},
               next(corr))
    gen, mid = member.generation_id, member.member_id
    for version in HEARTBEAT.versions:
        instance = "static-1" if version >= 3 else None
        for group, generation, member_id in (("g", gen, mid), ("g", gen + 1, mid), ("g", gen, "stranger"),
                                             ("nobody", 1, "m"), ("", 1, "m")):
            answers.append(await send(conn, transport, 12, version, {
                "group_id": group, "generation_id": generation, "member_id": member_id,
                "group_instance_id": instance}, next(corr)))
    for version in OFFSET_COMMIT.versions:
        instance = "static-1" if version >= 7 else None
        partitions = [{"partition_index": p, "committed_offset": 10 * version + p, "committed_leader_epoch": 3,
                       "committed_metadata": meta} for p, meta in ((0, ""), (1, None), (2, "x" * 5000), (7, "m"))]
        for group, generation, member_id in (("g", gen, mid), ("g", gen + 5, mid), ("standalone", -1, ""),
                                             ("nobody", 4, "m")):
            answers.append(await send(conn, transport, 8, version, {
                "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
                "group_instance_id": instance, "retention_time": 60000,
                "topics": [{"name": TOPIC, "partitions": partitions},
                           {"name": "missing", "partitions": partitions[:1]}]}, next(corr)))
    return answers


async def test_the_fast_codecs_answer_exactly_as_the_general_path():
    fast, general = await start(True), await start(False)
    assert fast.dispatcher._fast and not general.dispatcher._fast  # the two paths really are different
    try:
        with_fast = await scenario(fast)
        without = await scenario(general)
    finally:
        await fast.stop()
        await general.stop()
    assert len(with_fast) == len(without)
    for i, (a, b) in enumerate(zip(with_fast, without)):
        assert a == b, f"answer {i} differs"


async def group_scenario(broker: Broker) -> list[bytes]:
    """JoinGroup and SyncGroup in every version the fast codecs serve, with member ids made the same on
    both brokers: the member-id round, a group of two forming (the leader's answer lists the members, the
    follower's parked join and sync are answered when the others arrive), a static member, and the errors
    (unknown member, wrong generation, an empty group id, inconsistent protocols). Every answer, in order."""
    for shard in broker.groups.shards():
        shard.state.new_member_id = ids("member")
    conns = [connect(broker) for _ in range(2)]
    answers: list[bytes] = []
    corr = itertools.count(500)
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    def read(api_key: int, version: int, frame: bytes):
        body = frame[4:]
        _, pos = parse_response_header(body, api_key, True)
        return response_reader(api_key, version)(body, pos)[0]

    async def call(i: int, api_key: int, version: int, body: dict) -> bytes:
        answer = await send(*conns[i], api_key, version, body, next(corr))
        answers.append(answer)
        return answer

    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"},
                 {"name": "roundrobin", "metadata": b"\x00" * 200}]

    def join(group: str, member: str, instance: str | None = None, protos=protocols) -> dict:
        return {"group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": member,
                "group_instance_id": instance, "protocol_type": "consumer", "protocols": protos, "reason": "why"}

    for version in JOIN_GROUP.versions:
        sync_version = SYNC_GROUP.versions[version % len(SYNC_GROUP.versions)]
        group = f"group-v{version}"
        a = read(11, version, await call(0, 11, version, join(group, ""))).member_id  # MEMBER_ID_REQUIRED
        alone = read(11, version, await call(0, 11, version, join(group, a)))  # generation 1, A alone
        sync = {"group_id": group, "generation_id": alone.generation_id, "member_id": a, "group_instance_id": None,
                "protocol_type": "consumer", "protocol_name": alone.protocol_name,
                "assignments": [{"member_id": a, "assignment": b"\x00\x01" * 3}]}
        await call(0, 14, sync_version, sync)
        b = read(11, version, await call(1, 11, version, join(group, ""))).member_id
        # B's join parks (a rebalance begins) until A rejoins; then both are answered, A's as the leader.
        parked = asyncio.ensure_future(send(*conns[1], 11, version, join(group, b), next(corr)))
        await asyncio.sleep(0.05)
        await call(0, 14, sync_version, {**sync, "assignments": []})  # REBALANCE_IN_PROGRESS
        leader = read(11, version, await call(0, 11, version, join(group, a)))
        answers.append(await parked)
        sync = {**sync, "generation_id": leader.generation_id, "protocol_name": leader.protocol_name}
        follower_sync = asyncio.ensure_future(send(*conns[1], 14, sync_version,
                                                   {**sync, "member_id": b, "assignments": []}, next(corr)))
        await asyncio.sleep(0.05)
        await call(0, 14, sync_version, {**sync, "assignments": [
            {"member_id": a, "assignment": b"\x00\x01" * 3}, {"member_id": b, "assignment": b"\x00\x02" * 100}]})
        answers.append(await follower_sync)
        await call(0, 11, version, join(group, b))  # a follower rejoining Stable with the same metadata
        await call(0, 11, version, join(group, "stranger"))
        await call(0, 14, sync_version, {**sync, "generation_id": leader.generation_id + 7})
        await call(0, 14, sync_version, {**sync, "member_id": "stranger"})
        await call(0, 11, version, join("", ""))
        await call(0, 11, version, join(group, "", protos=[{"name": "other", "metadata": b""}]))
        await call(0, 11, version, join(f"static-v{version}", "", instance="instance-1"))
    return answers


async def test_the_fast_group_codecs_answer_exactly_as_the_general_path():
    fast, general = await start(True), await start(False)
    try:
        with_fast = await group_scenario(fast)
        without = await group_scenario(general)
    finally:
        await fast.stop()
        await general.stop()
    assert len(with_fast) == len(without)
    for i, (a, b) in enumerate(zip(with_fast, without)):
        assert a == b, f"answer {i} differs"


# --------------------------------------------------------------------------- the heartbeat lane


class RecordingTransport:
    """Keeps every byte written, for pipelined requests answered in several writes."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data
        self.inner.write(data)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def split_frames(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos:pos + 4], "big", signed=True)
        out.append(bytes(data[pos:pos + 4 + size]))
        pos += 4 + size
    return out


async def lane_scenario(broker: Broker) -> tuple[list[bytes], int]:
    """Pipelined reads mixing heartbeats the lane takes (a dynamic member of a Stable group) with ones it
    must leave to the handler (wrong generation, unknown member, a static member's instance id, an empty
    group id) and with a commit whose write is pending (the heartbeats behind it wait for it). Returns every
    answer in order and how many the lane gave."""
    taken = [0]
    for key, (answer, name) in list(broker.dispatcher.lanes.items()):
        def counted(data, start, end, answer=answer):
            result = answer(data, start, end)
            taken[0] += result is not None
            return result
        broker.dispatcher.lanes[key] = (counted, name)
    conn, counting = connect(broker)
    transport = RecordingTransport(counting)
    conn.transport = transport
    corr = itertools.count(500)
    await send(conn, counting, 19, 7, {"topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1,
                                                   "assignments": [], "configs": []}],
                                       "timeout": 10000, "validate_only": False}, next(corr))
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]
    join = {"group_id": "dyn", "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "protocols": protocols, "reason": None}
    for _ in range(2):  # MEMBER_ID_REQUIRED, then the join with the id
        raw = (await send(conn, counting, 11, 9, join, next(corr)))[4:]
        _, pos = parse_response_header(raw, 11, True)
        joined = response_reader(11, 9)(raw, pos)[0]
        join["member_id"] = joined.member_id
    await send(conn, counting, 14, 5, {"group_id": "dyn", "generation_id": joined.generation_id,
                                       "member_id": joined.member_id, "group_instance_id": None,
                                       "protocol_type": "consumer", "protocol_name": joined.protocol_name,
                                       "assignments": [{"member_id": joined.member_id, "assignment": b""}]},
               next(corr))
    gen, mid = joined.generation_id, joined.member_id

    def beat(version: int, generation: int = gen, member: str = mid, group: str = "dyn",
             instance: str | None = None) -> bytes:
        return encode(12, version, {"group_id": group, "generation_id": generation, "member_id": member,
                                    "group_instance_id": instance}, next(corr))

    commit = encode(8, 8, {"group_id": "dyn", "generation_id_or_member_epoch": gen, "member_id": mid,
                           "group_instance_id": None,
                           "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                                      "committed_leader_epoch": -1,
                                                                      "committed_metadata": ""}]}]}, next(corr))
    reads = [
        b"".join(beat(v) for v in HEARTBEAT.versions),
        beat(4) + beat(4, generation=gen + 1) + beat(2) + beat(4, member="stranger") + beat(3, instance="nope")
        + beat(4, group="") + beat(1),
        beat(4) + commit + beat(4) + beat(0),  # behind the pending commit: the ordinary way, in order
        beat(4)[:9],  # a frame split across reads
    ]
    last = beat(4)
    reads[-1] = last[:9]
    reads.append(last[9:] + beat(4))
    transport.data.clear()
    expected = sum(len(split_frames(r)) for r in reads[:-2]) + 2
    for chunk in reads:
        conn.data_received(chunk)
    for _ in range(1000):
        if len(split_frames(bytes(transport.data))) >= expected:
            break
        await asyncio.sleep(0.001)
    sent = [int.from_bytes(f[8:12], "big") for f in split_frames(b"".join(reads))]
    answers = split_frames(bytes(transport.data))
    assert [int.from_bytes(a[4:8], "big") for a in answers] == sent  # every answer, in request order
    return answers, taken[0]


async def test_the_heartbeat_lane_answers_exactly_as_the_handler_and_in_order():
    fast, general = await start(True), await start(False)
    assert fast.dispatcher.lanes and not general.dispatcher.lanes
    try:
        with_lane, taken = await lane_scenario(fast)
        without, none_taken = await lane_scenario(general)
    finally:
        await fast.stop()
        await general.stop()
    assert none_taken == 0
    assert taken >= 9  # the five versions, three of the second read, the one ahead of the commit
    assert len(with_lane) == len(without) == 18
    for i, (a, b) in enumerate(zip(with_lane, without)):
        assert a == b, f"answer {i} differs"
