"""A very large OffsetCommit is read, committed and answered a slice at a time (issue 17).

Through the connection code of an embedded broker: the answer is byte for byte the ordinary path's (every
partition's error in request order, in a flexible and a classic version), the offsets are fetched back,
other connections are served between two slices (a heartbeat is answered while the commit is half
applied), a malformed heavy request closes its connection and commits nothing, and four at once all
succeed. The stall itself (≤ 100 ms at a million partitions) is measured by bench/heavy_request_bench.py.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from bench.hotpath_bench import CountingTransport, connect, roundtrip, setup_heartbeat
from bench.requests import encode
from groupcoord.coordinator.apis import offset_commit
from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.server import dispatch
from groupcoord.coordinator.server.connection import KafkaConnection
from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.registry import is_flexible, response_reader

pytestmark = pytest.mark.asyncio

TOPIC = "orders"
PARTITIONS = 120


def heavy_body(group: str, version: int, offset_base: int = 0) -> dict:
    """170 partitions of ``orders`` (the last 50 unknown), 2.5 KB of metadata each (two too large), then an
    unknown topic: well past HEAVY_REQUEST_BYTES."""
    parts = [{"partition_index": p, "committed_offset": offset_base + p, "committed_leader_epoch": 4,
              "committed_metadata": ("x" * 5000) if p in (7, 101) else f"{p:04d}" * 625}
             for p in range(PARTITIONS + 50)]
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "retention_time": -1, "topics": [{"name": TOPIC, "partitions": parts},
                                             {"name": "missing", "partitions": parts[:3]}]}


def decode(frame: bytes, api_key: int, version: int):
    body = frame[4:]
    _, pos = parse_response_header(body, api_key, is_flexible(api_key, version))
    return response_reader(api_key, version)(body, pos)[0]


async def started() -> Broker:
    broker = Broker(group_initial_rebalance_delay_ms=0)
    await broker.start()
    await answer_of(broker, encode(19, 7, {"topics": [
        {"name": TOPIC, "num_partitions": PARTITIONS, "replication_factor": 1, "assignments": [], "configs": []}],
        "timeout": 30000, "validate_only": False}))
    return broker


async def fetched(broker: Broker, group: str) -> dict[int, tuple[int, str | None]]:
    conn, transport = connect(broker)
    answer = decode(await roundtrip(conn, transport, encode(9, 8, {"groups": [
        {"group_id": group, "member_id": None, "member_epoch": -1, "topics": None}], "require_stable": False})),
        9, 8)
    return {int(p.partition_index): (int(p.committed_offset), p.metadata)
            for g in answer.groups for t in g.topics if t.name == TOPIC for p in t.partitions}


async def answer_of(broker: Broker, frame: bytes) -> bytes:
    conn, transport = connect(broker)
    before = transport.frames
    conn.data_received(frame)
    for _ in range(20000):
        if transport.frames > before:
            return transport.last
        await asyncio.sleep(0.001)
    raise TimeoutError("no answer")


@pytest.mark.parametrize("version", [7, 8])
async def test_a_heavy_commit_answers_as_the_ordinary_path_and_is_fetched_back(version, monkeypatch):
    frame = encode(8, version, heavy_body("heavy", version), correlation_id=42)
    assert len(frame) > dispatch.HEAVY_REQUEST_BYTES
    heavy = await started()
    try:
        assert isinstance(heavy.dispatcher.decode(frame[4:], "h", 1).request, dispatch.HeavyRequest)
        answer = await answer_of(heavy, frame)
        offsets = await fetched(heavy, "heavy")
    finally:
        await heavy.stop()
    monkeypatch.setattr(dispatch, "HEAVY_REQUEST_BYTES", 1 << 40)  # the same request, decoded whole
    ordinary = await started()
    try:
        assert not isinstance(ordinary.dispatcher.decode(frame[4:], "h", 1).request, dispatch.HeavyRequest)
        expected = await answer_of(ordinary, frame)
        expected_offsets = await fetched(ordinary, "heavy")
    finally:
        await ordinary.stop()
    assert answer == expected
    codes = [int(p.error_code) for t in decode(answer, 8, version).topics for p in t.partitions]
    assert codes.count(0) == PARTITIONS - 2 and codes.count(12) == 2 and codes.count(3) == 53
    assert offsets == expected_offsets
    assert len(offsets) == PARTITIONS - 2 and offsets[5] == (5, "0005" * 625)


async def test_other_connections_are_served_between_two_slices(monkeypatch):
    monkeypatch.setattr(offset_commit, "SLICE_PARTITIONS", 20)
    broker = await started()
    try:
        beat_conn, beat_transport = connect(broker)
        beat = await setup_heartbeat(broker, beat_conn, beat_transport)
        heavy_conn, heavy_transport = connect(broker)
        heavy_conn.data_received(encode(8, 8, heavy_body("heavy", 8)))
        seen: list[int] = []  # offsets committed so far, at each heartbeat's answer
        while heavy_transport.frames == 0:
            before = beat_transport.frames
            beat_conn.data_received(beat)
            assert beat_transport.frames == before + 1  # answered at once
            seen.append(len(broker.groups.committed_offsets("heavy")))
            await asyncio.sleep(0)
        assert seen[0] == 0  # the commit had not run when the first heartbeat was answered
        assert any(0 < n < PARTITIONS - 2 for n in seen), seen  # some were answered half-way through it
        assert len(broker.groups.committed_offsets("heavy")) == PARTITIONS - 2
    finally:
        await broker.stop()


class ClosingTransport(CountingTransport):
    closed = False

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True


@pytest.mark.parametrize("damage", ["cut", "lying count"])
async def test_a_malformed_heavy_commit_closes_the_connection_and_commits_nothing(damage):
    frame = encode(8, 8, heavy_body("heavy", 8))
    body = frame[4:]
    if damage == "cut":
        body = body[:-1000]
    else:  # the second topic's partition count (compact: 3 + 1) claims 2**28 entries
        at = body.rindex(b"\x08missing") + 8
        assert body[at] == 4
        body = body[:at] + b"\x80\x80\x80\x80\x01" + body[at + 1:]
    broker = await started()
    try:
        conn = KafkaConnection(broker.server, "127.0.0.1")
        transport = ClosingTransport()
        conn.connection_made(transport)  # type: ignore[arg-type]
        conn.data_received(struct.pack(">i", len(body)) + body)
        for _ in range(5000):
            if transport.closed:
                break
            await asyncio.sleep(0.001)
        assert transport.closed and transport.frames == 0
        assert broker.groups.committed_offsets("heavy") == {}
    finally:
        await broker.stop()


async def test_four_heavy_commits_at_once_all_succeed():
    broker = await started()
    try:
        frames = [encode(8, 8, heavy_body(f"heavy-{n}", 8, offset_base=1000 * n)) for n in range(4)]
        answers = await asyncio.gather(*(answer_of(broker, frame) for frame in frames))
        for n, answer in enumerate(answers):
            codes = [int(p.error_code) for t in decode(answer, 8, 8).topics for p in t.partitions]
            assert codes.count(0) == PARTITIONS - 2
            offsets = await fetched(broker, f"heavy-{n}")
            assert len(offsets) == PARTITIONS - 2 and offsets[9][0] == 1000 * n + 9
    finally:
        await broker.stop()


def heavy_join_body(member_id: str, version: int) -> dict:
    """3,000 protocols of 100 bytes: past HEAVY_REQUEST_BYTES."""
    return {"group_id": "joined", "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer", "reason": "big",
            "protocols": [{"name": f"p{n}", "metadata": bytes([n % 251]) * 100} for n in range(3000)]}


@pytest.mark.parametrize("version", [5, 9])
async def test_a_heavy_join_group_is_served_as_the_ordinary_path_serves_it(version, monkeypatch):
    async def scenario() -> list:
        broker = Broker(group_initial_rebalance_delay_ms=0)
        await broker.start()
        try:
            frame = encode(11, version, heavy_join_body("", version))
            heavy = isinstance(broker.dispatcher.decode(frame[4:], "h", 1).request, dispatch.HeavyRequest)
            first = decode(await answer_of(broker, frame), 11, version)
            member = first.member_id
            joined = decode(await answer_of(broker, encode(11, version, heavy_join_body(member, version))), 11,
                            version)
            group = broker.groups.shard_for("joined").groups["joined"]
            stored = group.members[member].protocols
            return [heavy, int(first.error_code), int(joined.error_code), joined.protocol_name, joined.leader == member,
                    len(joined.members), len(stored), stored[2999] if isinstance(stored, (list, tuple)) else None]
        finally:
            await broker.stop()

    sliced = await scenario()
    monkeypatch.setattr(dispatch, "HEAVY_REQUEST_BYTES", 1 << 40)
    ordinary = await scenario()
    assert sliced[0] is True and ordinary[0] is False
    assert sliced[1:] == ordinary[1:]
    assert sliced[1:4] == [79 if version >= 4 else 0, 0, "p0"]
