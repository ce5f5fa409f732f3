"""The heartbeat lane's runs: the frames of one version that follow each other in a read are answered in one
call, with one clock reading; a member's request is read once it has been answered, never remembered when the
lane left it to the handler; a run stops at the first frame it does not take."""

from __future__ import annotations

import struct
from types import SimpleNamespace

from bench.requests import encode
from groupcoord.coordinator.apis import heartbeat
from groupcoord.protocol.fast_codecs import HeartbeatMembers, heartbeat_ok_parts
from groupcoord.protocol.framing import FrameDecoder


def frames(*specs: tuple[int, str, int]) -> tuple[bytes, list[int]]:
    """One read of heartbeats (version, member, correlation id), split as the connection splits it."""
    data = b"".join(encode(12, v, {"group_id": "g", "generation_id": 3, "member_id": m, "group_instance_id": None}, c)
                    for v, m, c in specs)
    return FrameDecoder().spans(data)


def lane_with(accept: set[str], monkeypatch) -> tuple[object, list, list, list]:
    beats: list[tuple] = []
    clock: list[int] = []
    reads: list[bytes] = []

    def beat(group_id: str, generation: int, member_id: str, now: int) -> bool:
        beats.append((group_id, generation, member_id, now))
        return member_id in accept

    def wall_ms() -> int:
        clock.append(1)
        return 1_000 + len(clock)

    real_read = HeartbeatMembers.read
    monkeypatch.setattr(HeartbeatMembers, "read", lambda self, body: reads.append(body) or real_read(self, body))
    services = SimpleNamespace(groups=SimpleNamespace(heartbeat_lane=lambda: (beat, wall_ms)), authorizer=None)
    return heartbeat.lane(services), beats, clock, reads


def answer_of(version: int, correlation: int) -> bytes:
    prefix, tail = heartbeat_ok_parts(version)
    return prefix + struct.pack(">i", correlation) + tail


def test_a_run_is_answered_in_one_call_with_one_clock_reading(monkeypatch):
    lane, beats, clock, reads = lane_with({"m"}, monkeypatch)
    data, bounds = frames((4, "m", 1), (4, "m", 2), (4, "m", 3))
    out: list[bytes] = []
    assert lane.answer(data, bounds, 0, out) == 6
    assert out == [answer_of(4, 1), answer_of(4, 2), answer_of(4, 3)]
    assert clock == [1] and beats == [("g", 3, "m", 1001)] * 3
    assert len(reads) == 1  # read once, then remembered


def test_a_request_left_to_the_handler_is_not_remembered_and_ends_the_run(monkeypatch):
    lane, beats, clock, reads = lane_with({"m"}, monkeypatch)
    data, bounds = frames((4, "m", 1), (4, "stranger", 2), (4, "m", 3))
    out: list[bytes] = []
    assert lane.answer(data, bounds, 0, out) == 2  # the stranger's frame goes the ordinary way
    assert out == [answer_of(4, 1)]
    assert lane.answer(data, bounds, 2, out) == 2  # and again: declined, nothing done
    assert len(out) == 1
    assert lane.answer(data, bounds, 4, out) == 6
    assert len(reads) == 3  # m once; the stranger each time (never remembered)


def test_a_run_stops_at_another_version(monkeypatch):
    lane, beats, clock, reads = lane_with({"m"}, monkeypatch)
    data, bounds = frames((4, "m", 1), (3, "m", 2), (3, "m", 3), (4, "m", 4))
    out: list[bytes] = []
    assert lane.answer(data, bounds, 0, out) == 2
    assert lane.answer(data, bounds, 2, out) == 6
    assert lane.answer(data, bounds, 6, out) == 8
    assert out == [answer_of(4, 1), answer_of(3, 2), answer_of(3, 3), answer_of(4, 4)]
    assert len(clock) == 3
