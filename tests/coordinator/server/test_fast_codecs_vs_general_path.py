"""A broker answers Heartbeat and OffsetCommit byte for byte the same with its fast codecs as without them.

Two embedded brokers, one with the hand-written codecs (the default) and one with every request through kio's
reader and the schema encoder, are sent the same requests in every served version — valid members and
commits, and the error cases (unknown group and member, wrong generation, unknown topic, a static member,
metadata too large) — over the connection code itself, and must send the same bytes back.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

import pytest

from bench.hotpath_bench import connect, roundtrip
from bench.requests import encode
from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.runtime.coordinator_runtime import LANE_JOIN_WINDOW_S
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


async def assert_same_answers_with_and_without_fast_codecs(scenario) -> None:
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


async def test_the_fast_codecs_answer_exactly_as_the_general_path():
    await assert_same_answers_with_and_without_fast_codecs(scenario)


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
    await assert_same_answers_with_and_without_fast_codecs(group_scenario)


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


async def one_member_group(broker: Broker, group: str, partitions: int, first_correlation_id: int):
    """A counting connection to ``broker`` on which TOPIC (``partitions`` partitions) is created and ``group``
    formed with one member: (connection, its counting transport, the recording transport, the correlation
    ids to go on with, the generation, the member id)."""
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    conn, counting = connect(broker)
    transport = RecordingTransport(counting)
    conn.transport = transport
    corr = itertools.count(first_correlation_id)
    await send(conn, counting, 19, 7, {"topics": [{"name": TOPIC, "num_partitions": partitions, "replication_factor": 1,
                                                   "assignments": [], "configs": []}],
                                       "timeout": 10000, "validate_only": False}, next(corr))
    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]
    join = {"group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "protocols": protocols, "reason": None}
    for _ in range(2):  # MEMBER_ID_REQUIRED, then the join with the id
        raw = (await send(conn, counting, 11, 9, join, next(corr)))[4:]
        _, pos = parse_response_header(raw, 11, True)
        joined = response_reader(11, 9)(raw, pos)[0]
        join["member_id"] = joined.member_id
    await send(conn, counting, 14, 5, {"group_id": group, "generation_id": joined.generation_id,
                                       "member_id": joined.member_id, "group_instance_id": None,
                                       "protocol_type": "consumer", "protocol_name": joined.protocol_name,
                                       "assignments": [{"member_id": joined.member_id, "assignment": b""}]},
               next(corr))
    return conn, counting, transport, corr, joined.generation_id, joined.member_id


async def lane_scenario(broker: Broker) -> tuple[list[bytes], int]:
    """Pipelined reads mixing heartbeats the lane takes (a dynamic member of a Stable group) with ones it
    must leave to the handler (wrong generation, unknown member, a static member's instance id, an empty
    group id) and with a commit whose write is pending (the heartbeats behind it wait for it). Returns every
    answer in order and how many the lane gave."""
    taken = [0]
    for key, (answer, name) in list(broker.dispatcher.lanes.items()):
        def counted(data, bounds, i, out, answer=answer):
            served = answer(data, bounds, i, out)
            assert served >= i and len(out) >= (served - i) // 2
            taken[0] += (served - i) // 2
            return served
        broker.dispatcher.lanes[key] = (counted, name)
    conn, counting, transport, corr, gen, mid = await one_member_group(broker, "dyn", 1, 500)

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
    expected = sum(len(split_frames(r)) for r in reads[:-2]) + 2
    return await answers_in_order(conn, transport, reads, expected, polls=1000), taken[0]


async def answers_in_order(conn, transport, reads: list[bytes], expected: int, polls: int) -> list[bytes]:
    """Feeds ``reads`` to the connection as they would arrive, waits (at most ``polls`` ms) for ``expected``
    answers, and checks that they answer every request in request order."""
    transport.data.clear()
    for chunk in reads:
        conn.data_received(chunk)
    for _ in range(polls):
        if len(split_frames(bytes(transport.data))) >= expected:
            break
        await asyncio.sleep(0.001)
    sent = [int.from_bytes(f[8:12], "big") for f in split_frames(b"".join(reads))]
    answers = split_frames(bytes(transport.data))
    assert [int.from_bytes(a[4:8], "big") for a in answers] == sent  # every answer, in request order
    return answers


async def with_and_without_lanes(scenario) -> tuple[Broker, list[bytes], int, list[bytes]]:
    """The scenario against a broker with the lanes and one without: (the first broker, its answers, how many
    requests its lanes took, the other's answers); the one without must have taken none."""
    fast, general = await start(True), await start(False)
    try:
        with_lane, taken = await scenario(fast)
        without, none_taken = await scenario(general)
    finally:
        await fast.stop()
        await general.stop()
    assert none_taken == 0
    assert not general.dispatcher.lanes and not general.dispatcher.deferred_lanes
    return fast, with_lane, taken, without


async def test_the_heartbeat_lane_answers_exactly_as_the_handler_and_in_order():
    fast, with_lane, taken, without = await with_and_without_lanes(lane_scenario)
    assert fast.dispatcher.lanes
    assert taken >= 9  # the five versions, three of the second read, the one ahead of the commit
    assert len(with_lane) == len(without) == 18
    for i, (a, b) in enumerate(zip(with_lane, without)):
        assert a == b, f"answer {i} differs"


async def test_the_heartbeat_lane_counts_its_requests_as_the_handler_does():
    """Runs of laned heartbeats are observed as the ordinary way observes them: one request each, by error."""
    counts = []
    for fast in (True, False):
        broker = await start(fast)
        try:
            await lane_scenario(broker)
        finally:
            await broker.stop()
        counts.append({key: n for key, n in broker.metrics.request_stats.counts.items() if key[0] == "Heartbeat"})
    assert counts[0] == counts[1]
    assert counts[0][("Heartbeat", 0)] >= 9


# --------------------------------------------------------------------------- the commit lane


async def commit_lane_scenario(broker: Broker) -> tuple[list[bytes], int]:
    """Pipelined reads of OffsetCommits the lane takes (standalone and a member's at its generation, one and
    several partitions, v8 and v9) mixed with ones it must leave to the handler (a wrong generation, an
    unknown partition or topic, metadata too large, an unknown group at a generation, v7) and with
    heartbeats, then OffsetFetch of what was stored. Returns every answer in order and how many commits
    the lane took."""
    taken = [0]
    for key, (answer, name) in list(broker.dispatcher.deferred_lanes.items()):
        if name != "OffsetCommit":
            continue
        def counted(conn, data, start, end, answer=answer):
            result = answer(conn, data, start, end)
            taken[0] += bool(result)
            return result
        broker.dispatcher.deferred_lanes[key] = (counted, name)
    conn, counting, transport, corr, gen, mid = await one_member_group(broker, "members", 3, 900)

    def commit(version: int, group: str, generation: int, member: str, parts, topic: str = TOPIC) -> bytes:
        return encode(8, version, {"group_id": group, "generation_id_or_member_epoch": generation,
                                   "member_id": member, "group_instance_id": None, "retention_time": -1,
                                   "topics": [{"name": topic, "partitions": [
                                       {"partition_index": p, "committed_offset": offset, "committed_leader_epoch": 2,
                                        "committed_metadata": meta} for p, offset, meta in parts]}]}, next(corr))

    def beat(generation: int = gen) -> bytes:
        return encode(12, 4, {"group_id": "members", "generation_id": generation, "member_id": mid,
                              "group_instance_id": None}, next(corr))

    reads = [
        commit(8, "solo", -1, "", [(0, 5, "")]) + commit(9, "solo", -1, "", [(1, 6, None), (2, 7, "m")])
        + commit(8, "members", gen, mid, [(0, 8, "")]) + commit(9, "members", gen, mid, [(1, 9, "")]),
        commit(8, "members", gen + 1, mid, [(0, 10, "")]) + commit(9, "solo", -1, "", [(0, 11, "")])
        + commit(8, "solo", -1, "", [(0, 12, ""), (5, 13, "")]) + beat() + commit(9, "solo", -1, "", [(0, 14, "")])
        + commit(8, "solo", -1, "", [(0, 15, "")], topic="missing") + commit(9, "nobody", 3, "m", [(0, 1, "")])
        + commit(8, "solo", -1, "", [(1, 16, "x" * 5000)]) + commit(7, "solo", -1, "", [(2, 17, "")])
        + commit(9, "solo", -1, "", [(2, 18, "")]) + beat(gen + 1),
    ]
    for group in ("solo", "members"):
        reads.append(encode(9, 8, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1,
                                               "topics": [{"name": TOPIC, "partition_indexes": [0, 1, 2]}]}],
                                   "require_stable": True}, next(corr)))
    expected = sum(len(split_frames(r)) for r in reads)
    return await answers_in_order(conn, transport, reads, expected, polls=2000), taken[0]


async def test_the_commit_lane_answers_exactly_as_the_handler_and_in_order():
    fast, with_lane, taken, without = await with_and_without_lanes(commit_lane_scenario)
    assert fast.dispatcher.deferred_lanes
    assert taken == 7  # the four of the first read; in the second, the v8 and v9 standalone ones it accepts
    assert len(with_lane) == len(without) == 17
    for i, (a, b) in enumerate(zip(with_lane, without)):
        assert a == b, f"answer {i} differs"


async def test_a_lane_commit_is_answered_only_once_its_record_is_durable():
    """The lane owes the answer until the shard's append returns (durable under the fsync policy), then
    answers it; a failed append answers it with the handler's error answer (NOT_COORDINATOR)."""
    broker = await start(True)
    try:
        conn, counting = connect(broker)
        transport = RecordingTransport(counting)
        conn.transport = transport
        await send(conn, counting, 19, 7, {"topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1,
                                                       "assignments": [], "configs": []}],
                                           "timeout": 10000, "validate_only": False}, 1)
        body = {"group_id": "held", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                           "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
        from groupcoord.coordinator.groups.hashing import partition_for

        assert broker.groups is not None
        rt = broker.groups._runtime._runtimes[partition_for("held", broker.groups.num_partitions)]
        log = rt.log
        real_append = log.append
        release = asyncio.Event()
        fail = [False]

        async def held_append(*args, **kwargs):
            await release.wait()
            if fail[0]:
                raise OSError("disk gone")
            return await real_append(*args, **kwargs)

        log.append = held_append
        taken = [0]
        for key, (answer, name) in list(broker.dispatcher.deferred_lanes.items()):
            if name != "OffsetCommit":
                continue
            def counted(c, data, start, end, answer=answer):
                result = answer(c, data, start, end)
                taken[0] += bool(result)
                return result
            broker.dispatcher.deferred_lanes[key] = (counted, name)
        observed: list[tuple[str, int, float]] = []

        class Recorder:
            def observe_request(self, api: str, error_code: int, seconds: float) -> None:
                observed.append((api, error_code, seconds))

        broker.dispatcher.observer = Recorder()
        transport.data.clear()
        conn.data_received(encode(8, 8, body, 2))
        await asyncio.sleep(0.05)
        assert taken[0] == 1 and transport.data == b""  # taken, and not answered while the append is held
        assert observed == []  # observed when answered, not when taken
        release.set()
        for _ in range(1000):
            if transport.data:
                break
            await asyncio.sleep(0.001)
        assert len(observed) == 1 and observed[0][:2] == ("OffsetCommit", 0) and observed[0][2] >= 0.05
        assert transport.data == OFFSET_COMMIT.write(8, 2, {"throttle_time": 0, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "error_code": 0}]}]})
        transport.data.clear()
        fail[0] = True
        conn.data_received(encode(8, 9, body, 3))
        for _ in range(1000):
            if transport.data:
                break
            await asyncio.sleep(0.001)
        assert taken[0] == 2
        assert transport.data == OFFSET_COMMIT.write(9, 3, {"throttle_time": 0, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "error_code": 16}]}]})  # NOT_COORDINATOR
        log.append = real_append
    finally:
        await broker.stop()


@dataclass
class HeldCommits:
    """Two standalone commits of one group, their shard's append held past the write timeout."""

    frames: list[bytes]
    """Their answers."""
    read_at: list[float]
    """When each was read (the loop's time)."""
    answered_at: list[float]
    """When each answer was written (to the millisecond)."""
    effects: int
    """How many Effects carried them."""
    by_the_lane: bool
    """Whether the lane queued them (its Effects' replies answered by the timeout), not the handler."""


async def _held_lane_commits(gap_s: float, timeout_ms: int = 300) -> HeldCommits:
    """Two standalone commits of one group read ``gap_s`` apart in one loop turn, while the shard's append is
    held past the write timeout (``timeout_ms``)."""
    import time

    from groupcoord.coordinator.groups.hashing import partition_for

    broker = Broker(group_initial_rebalance_delay_ms=0, offsets_commit_timeout_ms=timeout_ms)
    await broker.start()
    try:
        conn, counting = connect(broker)
        transport = RecordingTransport(counting)
        conn.transport = transport
        await send(conn, counting, 19, 7, {"topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1,
                                                       "assignments": [], "configs": []}],
                                           "timeout": 10000, "validate_only": False}, 1)
        assert broker.groups is not None
        rt = broker.groups._runtime._runtimes[partition_for("slow", broker.groups.num_partitions)]
        real_append = rt.log.append
        release = asyncio.Event()

        async def held_append(*args, **kwargs):
            await release.wait()
            return await real_append(*args, **kwargs)

        rt.log.append = held_append
        transport.data.clear()
        body = {"group_id": "slow", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                           "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
        loop = asyncio.get_running_loop()
        read_at = []
        conn.data_received(encode(8, 8, body, 2))
        read_at.append(loop.time())
        time.sleep(gap_s)  # the same loop turn, later
        conn.data_received(encode(8, 9, body, 3))
        read_at.append(loop.time())
        effects = len(rt.queue)
        answered_at: list[float] = []
        for _ in range(2000):
            frames = split_frames(bytes(transport.data))
            answered_at += [loop.time()] * (len(frames) - len(answered_at))
            if len(frames) >= 2:
                break
            await asyncio.sleep(0.001)
        by_the_lane = rt.lane_fx is not None and not rt.lane_fx.replies
        release.set()
        await asyncio.sleep(0.05)
        rt.log.append = real_append
        return HeldCommits(frames, read_at, answered_at, effects, by_the_lane)
    finally:
        await broker.stop()


TIMED_OUT = [OFFSET_COMMIT.write(version, corr, {"throttle_time": 0, "topics": [
    {"name": TOPIC, "partitions": [{"partition_index": 0, "error_code": 15}]}]}) for version, corr in ((8, 2), (9, 3))]
"""The two held commits' answers: COORDINATOR_NOT_AVAILABLE, the write timeout's error."""


async def test_a_lane_commit_whose_write_outlasts_the_write_timeout_is_answered_with_its_error():
    """offsets.commit.timeout.ms: the owed answer becomes COORDINATOR_NOT_AVAILABLE, as the handler's would."""
    held = await _held_lane_commits(0.0, timeout_ms=100)
    assert held.frames == TIMED_OUT
    assert held.by_the_lane


async def test_lane_commits_of_one_turn_share_one_write_and_none_is_timed_out_before_its_own_timeout():
    """A loop turn's lane commits for one shard join one Effects (one append, one release) even when the turn is
    slower than a commit's read; with a write timeout, none of them is answered with its error earlier than the
    timeout after it was read (the Effects' timeout counts from the last commit that joined it)."""
    held = await _held_lane_commits(LANE_JOIN_WINDOW_S / 2)
    assert held.effects == 1 and held.by_the_lane
    assert held.frames == TIMED_OUT
    assert min(held.answered_at) >= held.read_at[-1] + 0.3 - 0.0005  # (_expire's slack)


async def test_a_stalled_write_does_not_hold_back_the_timeout_of_the_commits_it_keeps_waiting():
    """Commits read further apart than the join window go into Effects of their own, so a write that stalls
    while commits keep coming cannot push the first ones' timeout back: each is answered within the window of
    its own deadline."""
    held = await _held_lane_commits(0.15)
    assert held.effects == 2
    assert held.frames == TIMED_OUT
    # Within the window of its own deadline (0.1 s for the loop's scheduling), not held back to the second's
    # deadline, 0.15 s later:
    assert held.answered_at[0] <= held.read_at[0] + 0.3 + LANE_JOIN_WINDOW_S + 0.1 < held.read_at[1] + 0.3
    assert all(at >= read + 0.3 - 0.0005 for at, read in zip(held.answered_at, held.read_at))  # (_expire's slack)
