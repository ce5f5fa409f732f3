"""The hand-written Heartbeat and OffsetCommit codecs agree with kio, in every version they serve.

Requests: kio writes a generated request; the fast reader must read the same field values kio's reader
reads (or decline, and leave the request to kio). Answers: the fast writer's frame must be byte for byte
the frame the general path (kio's writer behind the schema encoder) makes, whenever it writes one.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.protocol.build import build
from groupcoord.protocol.fast_codecs import (
    HEARTBEAT, HEARTBEAT_MEMBER_BYTES, OFFSET_COMMIT, HeartbeatMembers, heartbeat_ok_parts, offset_commit_ok_frame, offset_commit_ok_parts, lane_memory, read_heartbeat_at, read_offset_commit_lane_at, read_offset_commit_at,
)
from groupcoord.protocol.headers import encode_request_header, encode_response_header, parse_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, request_reader, response_class
from groupcoord.protocol.values import as_ms
from tests.support.full_run import examples

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
retention_ms = st.one_of(st.just(-1), st.integers(-(2**41), 2**41), st.integers(-8 * 10**16, 8 * 10**16))
# Short and long (a length past one varint byte sends the fast reader to the general path), ASCII and not.
text = st.one_of(st.text(max_size=12), st.text(min_size=120, max_size=140))
nullable_text = st.one_of(st.none(), text)
client_ids = st.one_of(st.none(), st.text(max_size=20))


def request_frame(api_key: int, version: int, body: dict, client_id: str | None, correlation_id: int = 7) -> bytes:
    header = encode_request_header(api_key, version, correlation_id, client_id, is_flexible(api_key, version))
    return header + encode_entity(build(request_class(api_key, version), body))


def kio_read(frame: bytes, api_key: int, version: int):
    header = parse_request_header(frame, is_flexible(api_key, version))
    return header.client_id, request_reader(api_key, version)(frame, header.body_offset)[0]


def general_answer(api_key: int, version: int, correlation_id: int, body: dict) -> bytes:
    """What the general path sends: header, then kio's writer of the built entity, size-prefixed."""
    payload = encode_response_header(correlation_id, api_key, is_flexible(api_key, version)) + encode_entity(
        build(response_class(api_key, version), body))
    return struct.pack(">i", len(payload)) + payload


# --------------------------------------------------------------------------- Heartbeat


@pytest.mark.parametrize("version", HEARTBEAT.versions)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, client_id=client_ids)
def test_heartbeat_request_reads_as_kio_reads_it(version, group, generation, member, instance, client_id):
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": instance}
    frame = request_frame(12, version, body, client_id)
    fast = HEARTBEAT.read(frame, version)
    kio_client, kio_req = kio_read(frame, 12, version)
    if fast is None:  # declined: only for what the reader says it leaves to kio
        assert max(len(group.encode()), len(member.encode()), len((instance or "").encode())) >= 0x7F - 1 or \
            (client_id is not None and len(client_id.encode()) > 0x7FFF)
        return
    client, req = fast
    assert client == kio_client
    assert req.group_id == kio_req.group_id
    assert req.generation_id == kio_req.generation_id
    assert req.member_id == kio_req.member_id
    assert req.group_instance_id == getattr(kio_req, "group_instance_id", None)


@pytest.mark.parametrize("version", HEARTBEAT.versions)
@SETTINGS
@given(throttle=int32, error=st.sampled_from([0, 15, 16, 22, 25, 27, 82]), correlation=int32)
def test_heartbeat_answer_is_byte_for_byte_the_general_one(version, throttle, error, correlation):
    body = {"throttle_time": throttle, "error_code": error}
    assert HEARTBEAT.write(version, correlation, body) == general_answer(12, version, correlation, body)


def test_heartbeat_writer_declines_shapes_it_does_not_know():
    assert HEARTBEAT.write(4, 1, {"throttle_time": 0, "error_code": 0, "extra": 1}) is None
    assert HEARTBEAT.write(4, 1, object()) is None


# --------------------------------------------------------------------------- OffsetCommit

partitions = st.lists(st.fixed_dictionaries({
    "partition_index": int32, "committed_offset": int64, "committed_leader_epoch": int32,
    "committed_metadata": nullable_text}), max_size=4)
topics = st.lists(st.fixed_dictionaries({"name": text, "partitions": partitions}), max_size=3)


@pytest.mark.parametrize("version", OFFSET_COMMIT.versions)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, retention=retention_ms, topics=topics,
       client_id=client_ids)
def test_offset_commit_request_reads_as_kio_reads_it(version, group, generation, member, instance, retention,
                                                     topics, client_id):
    body = {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": instance, "retention_time": retention, "topics": topics}
    frame = request_frame(8, version, body, client_id)
    fast = OFFSET_COMMIT.read(frame, version)
    try:
        kio_client, kio_req = kio_read(frame, 8, version)
    except ValueError:  # kio refuses it (a retention time it cannot hold): so must the fast path
        assert fast is None
        return
    if fast is None:
        return  # a long string: the general path's (checked by the decline test below)
    client, req = fast
    assert client == kio_client
    assert req.group_id == kio_req.group_id
    assert req.generation_id_or_member_epoch == kio_req.generation_id_or_member_epoch
    assert req.member_id == kio_req.member_id
    assert req.group_instance_id == getattr(kio_req, "group_instance_id", None)
    kio_retention = getattr(kio_req, "retention_time", None)
    assert req.retention_time == (None if kio_retention is None else as_ms(kio_retention))
    assert len(req.topics) == len(kio_req.topics)
    for mine, theirs in zip(req.topics, kio_req.topics):
        assert mine.name == theirs.name
        assert len(mine.partitions) == len(theirs.partitions)
        for p, q in zip(mine.partitions, theirs.partitions):
            assert p.partition_index == q.partition_index
            assert p.committed_offset == q.committed_offset
            assert p.committed_leader_epoch == getattr(q, "committed_leader_epoch", -1)
            assert p.committed_metadata == q.committed_metadata


@pytest.mark.parametrize("version", OFFSET_COMMIT.versions)
def test_offset_commit_reader_takes_the_common_request(version):
    """The fast path is not declining everything: a client's ordinary commit is read by it."""
    body = {"group_id": "g", "generation_id_or_member_epoch": 3, "member_id": "m-1", "group_instance_id": None,
            "retention_time": -1,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 42,
                                                     "committed_leader_epoch": 1, "committed_metadata": ""}]}]}
    assert OFFSET_COMMIT.read(request_frame(8, version, body, "c"), version) is not None
    hb = {"group_id": "g", "generation_id": 3, "member_id": "m-1", "group_instance_id": None}
    for hb_version in HEARTBEAT.versions:
        assert HEARTBEAT.read(request_frame(12, hb_version, hb, "c"), hb_version) is not None


@pytest.mark.parametrize("version", OFFSET_COMMIT.versions)
def test_truncated_requests_are_left_to_the_general_path(version):
    body = {"group_id": "g", "generation_id_or_member_epoch": 3, "member_id": "m", "group_instance_id": "i",
            "retention_time": 5,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 42,
                                                     "committed_leader_epoch": 1, "committed_metadata": "x"}]}]}
    frame = request_frame(8, version, body, "c")
    for cut in range(10, len(frame) - 1):
        assert OFFSET_COMMIT.read(frame[:cut], version) is None, cut
    bad_utf8 = frame.replace(b"g", b"\xff", 1)  # the group id's one byte
    assert OFFSET_COMMIT.read(bad_utf8, version) is None


answer_partitions = st.lists(st.fixed_dictionaries({"partition_index": int32,
                                                    "error_code": st.sampled_from([0, 3, 12, 16, 22, 25, 27])}),
                             max_size=4)
answer_topics = st.lists(st.fixed_dictionaries({"name": text, "partitions": answer_partitions}), max_size=3)


@pytest.mark.parametrize("version", OFFSET_COMMIT.versions)
@SETTINGS
@given(throttle=int32, topics=answer_topics, correlation=int32)
def test_offset_commit_answer_is_byte_for_byte_the_general_one(version, throttle, topics, correlation):
    body = {"throttle_time": throttle, "topics": topics}
    fast = OFFSET_COMMIT.write(version, correlation, body)
    if fast is None:  # declined (a name past one varint byte in a flexible version)
        assert version >= 8 and any(len(t["name"].encode()) >= 0x7F for t in topics)
        return
    assert fast == general_answer(8, version, correlation, body)


# --------------------------------------------------------------------------- Heartbeat read in place (the lane)


@pytest.mark.parametrize("version", HEARTBEAT.versions)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, client_id=client_ids,
       before=st.binary(max_size=8), after=st.binary(max_size=40))
def test_heartbeat_read_in_place_reads_as_kio_reads_it_and_never_past_its_frame(version, group, generation, member,
                                                                                instance, client_id, before, after):
    """Among other bytes (the frames before and after it in one read): the same values as kio's reader,
    and any cut of the frame is declined (never completed from the bytes of the next frame)."""
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": instance}
    frame = request_frame(12, version, body, client_id)
    data = before + frame + after
    start, end = len(before), len(before) + len(frame)
    fast = read_heartbeat_at(data, start, end)
    kio_client, kio_req = kio_read(frame, 12, version)
    if fast is None:
        assert max(len(group.encode()), len(member.encode()), len((instance or "").encode())) >= 0x7F - 1
    else:
        assert fast == (kio_client, kio_req.group_id, kio_req.generation_id, kio_req.member_id,
                        getattr(kio_req, "group_instance_id", None))
    for cut in range(start, end):
        assert read_heartbeat_at(data, start, cut) is None


@pytest.mark.parametrize("version", HEARTBEAT.versions)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, client_id=client_ids,
       correlation=int32)
def test_heartbeat_members_read_as_kio_reads_once_per_request(version, group, generation, member, instance, client_id,
                                                               correlation):
    """The lane's memory of a member's heartbeat (keyed by the frame past its correlation id): kio's values for
    a dynamic member, None for a static one or where the in-place reader declines; once remembered, the same
    again whatever the correlation id, unless too long to be kept."""
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": instance}
    frame = request_frame(12, version, body, client_id, correlation)
    members = HeartbeatMembers(version)
    read = members.read(frame[8:])
    in_place = read_heartbeat_at(frame, 0, len(frame))
    for cut in range(8, len(frame)):
        assert members.read(frame[8:cut]) is None  # a frame cut short is declined, as in place
    if in_place is None or in_place[4] is not None:
        assert read is None
        return
    _, kio_req = kio_read(frame, 12, version)
    assert read == (kio_req.group_id, kio_req.generation_id, kio_req.member_id)
    assert members.get(frame[8:]) is None  # read, not remembered until the lane says so
    members.remember(frame[8:], read)
    again = request_frame(12, version, body, client_id, correlation ^ 1)
    if len(frame) - 8 <= HEARTBEAT_MEMBER_BYTES:
        assert members.get(again[8:]) is read
    else:
        assert len(members) == 0  # too long to be kept


def test_heartbeat_members_are_bounded():
    from groupcoord.protocol import fast_codecs

    members = HeartbeatMembers(4)
    def body(n: int) -> bytes:
        return request_frame(12, 4, {"group_id": f"g{n}", "generation_id": 1, "member_id": "m",
                                     "group_instance_id": None}, "c")[8:]
    for n in range(fast_codecs.HEARTBEAT_MEMBERS_CACHED + 10):
        members.remember(body(n), members.read(body(n)))
    assert len(members) == fast_codecs.HEARTBEAT_MEMBERS_CACHED
    assert body(0) not in members and members[body(fast_codecs.HEARTBEAT_MEMBERS_CACHED + 9)] == (
        f"g{fast_codecs.HEARTBEAT_MEMBERS_CACHED + 9}", 1, "m")  # the oldest went
    classic = HeartbeatMembers(3)
    long = request_frame(12, 3, {"group_id": "g", "generation_id": 1, "member_id": "m" * 300,
                                 "group_instance_id": None}, "c")[8:]
    assert len(long) > fast_codecs.HEARTBEAT_MEMBER_BYTES
    member = classic.read(long)
    assert member == ("g", 1, "m" * 300)
    classic.remember(long, member)
    assert len(classic) == 0  # read, not kept


@pytest.mark.parametrize("version", HEARTBEAT.versions)
@SETTINGS
@given(correlation=int32)
def test_heartbeat_success_parts_make_the_general_answer(version, correlation):
    prefix, tail = heartbeat_ok_parts(version)
    answer = prefix + struct.pack(">i", correlation) + tail
    assert answer == general_answer(12, version, correlation, {"throttle_time": 0, "error_code": 0})


# --------------------------------------------------------------------------- OffsetCommit read in place (the lane)

LANE_VERSIONS = (8, 9)


@pytest.mark.parametrize("version", LANE_VERSIONS)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, topics=topics, client_id=client_ids,
       before=st.binary(max_size=8), after=st.binary(max_size=40))
def test_offset_commit_read_in_place_reads_as_kio_reads_it_and_never_past_its_frame(
        version, group, generation, member, instance, topics, client_id, before, after):
    """Among other bytes: the same values as kio's reader, declined exactly when the frame-copying fast
    reader declines, and any cut of the frame is declined (never completed from the next frame's bytes)."""
    body = {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": instance, "topics": topics}
    frame = request_frame(8, version, body, client_id)
    data = before + frame + after
    start, end = len(before), len(before) + len(frame)
    fast = read_offset_commit_at(data, start, end)
    assert (fast is None) == (OFFSET_COMMIT.read(frame, version) is None)
    if fast is not None:
        _, kio_req = kio_read(frame, 8, version)
        assert fast == (kio_req.group_id, kio_req.generation_id_or_member_epoch, kio_req.member_id,
                        kio_req.group_instance_id,
                        [(t.name, [(p.partition_index, p.committed_offset, p.committed_leader_epoch,
                                    p.committed_metadata) for p in t.partitions]) for t in kio_req.topics])
    for cut in range(start, end):
        assert read_offset_commit_at(data, start, cut) is None


@pytest.mark.parametrize("version", LANE_VERSIONS)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, topics=topics, client_id=client_ids,
       other_topics=topics, before=st.binary(max_size=8), after=st.binary(max_size=40))
def test_the_lane_reads_a_frame_with_the_last_ones_head_as_read_in_place_reads_it(
        version, group, generation, member, instance, topics, client_id, other_topics, before, after):
    """The lane's reader remembers the last frame's bytes before its topics: a frame read after one with the
    same head (the next commit of the same consumer) or another (any other frame) reads exactly as
    ``read_offset_commit_at`` reads it, and every cut of it is declined, remembered head or not."""
    body = {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": instance, "topics": topics}
    first = request_frame(8, version, {**body, "topics": other_topics}, client_id)
    frame = request_frame(8, version, body, client_id)
    data = before + frame + after
    start, end = len(before), len(before) + len(frame)
    expected = read_offset_commit_at(data, start, end)
    primers = [None, first, frame, request_frame(8, version, {**body, "group_id": group + "x"}, client_id)]
    for primed in primers:
        last = lane_memory()
        if primed is not None:
            read_offset_commit_lane_at(primed, 0, len(primed), last)
        got = read_offset_commit_lane_at(data, start, end, last)
        assert (got is None) == (expected is None)
        if got is not None:
            assert (got[0][1:], got[1]) == (expected[:4], expected[4])
        again = read_offset_commit_lane_at(data, start, end, last)
        assert again == got
        for cut in range(start, end):
            last_for_cut = list(last)
            assert read_offset_commit_lane_at(data, start, cut, last_for_cut) is None


@pytest.mark.parametrize("version", LANE_VERSIONS)
@SETTINGS
@given(group=text, member=text, client_id=client_ids, name=text, index=int32,
       first=st.tuples(int64, int32, nullable_text), then=st.tuples(int64, int32, nullable_text),
       same_metadata=st.booleans(), same_group=st.booleans(), extra=st.booleans(),
       before=st.binary(max_size=8), after=st.binary(max_size=40))
def test_the_lane_reads_a_commit_of_the_last_ones_partition_as_read_in_place_reads_it(
        version, group, member, client_id, name, index, first, then, same_metadata, same_group, extra, before,
        after):
    """The lane's reader remembers the last one-partition frame's topic bytes around its offset and epoch: the
    next commit of that partition (another offset and epoch; the same or other metadata; the same or another
    group; or a second partition besides) reads exactly as ``read_offset_commit_at`` reads it, again the same
    when read twice, and every cut of it is declined."""
    def commit(group_id: str, offset: int, epoch: int, metadata: str | None, more: bool = False) -> bytes:
        parts = [{"partition_index": index, "committed_offset": offset, "committed_leader_epoch": epoch,
                  "committed_metadata": metadata}]
        if more:
            parts.append({**parts[0], "partition_index": index ^ 1})
        return request_frame(8, version, {"group_id": group_id, "generation_id_or_member_epoch": -1,
                                          "member_id": member, "group_instance_id": None,
                                          "topics": [{"name": name, "partitions": parts}]}, client_id)

    primer = commit(group, *first)
    frame = commit(group if same_group else group + "x", then[0], then[1],
                   first[2] if same_metadata else then[2], extra)
    data = before + frame + after
    start, end = len(before), len(before) + len(frame)
    expected = read_offset_commit_at(data, start, end)
    last = lane_memory()
    read_offset_commit_lane_at(primer, 0, len(primer), last)
    got = read_offset_commit_lane_at(data, start, end, last)
    assert (got is None) == (expected is None)
    if got is not None:
        assert (got[0][1:], got[1]) == (expected[:4], expected[4])
    assert read_offset_commit_lane_at(data, start, end, last) == got
    for cut in range(start, end):
        assert read_offset_commit_lane_at(data, start, cut, list(last)) is None


short_text = st.text(max_size=12)
lane_topics = st.lists(st.tuples(short_text, st.lists(st.tuples(int32, int64, int32, st.none()), min_size=1,
                                                      max_size=4)), min_size=1, max_size=3)


@pytest.mark.parametrize("version", LANE_VERSIONS)
@SETTINGS
@given(topics=lane_topics, correlation=int32, repeat=st.booleans())
def test_offset_commit_lane_answer_is_byte_for_byte_the_general_one(version, topics, correlation, repeat):
    """The lane's every-partition-NONE answer (its cached one-partition tails included: ``repeat``)."""
    body = {"throttle_time": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": p[0], "error_code": 0} for p in parts]}
        for name, parts in topics]}
    correlation_bytes = struct.pack(">i", correlation)
    for _ in range(2 if repeat else 1):
        assert offset_commit_ok_frame(correlation_bytes, topics) == general_answer(8, version, correlation, body)


@pytest.mark.parametrize("version", LANE_VERSIONS)
@SETTINGS
@given(name=st.one_of(short_text, st.text(min_size=120, max_size=140)), index=int32, correlation=int32)
def test_offset_commit_one_partition_answer_parts_are_byte_for_byte_the_general_answer(version, name, index,
                                                                                       correlation):
    """What the lane writes around a commit's correlation id: None until the topic's name was written once,
    then kio's answer, byte for byte; never for a name too long for a one-byte length (which the lane's reader
    does not take either)."""
    body = {"throttle_time": 0, "topics": [{"name": name, "partitions": [{"partition_index": index, "error_code": 0}]}]}
    correlation_bytes = struct.pack(">i", correlation)
    frame = offset_commit_ok_frame(correlation_bytes, [(name, [(index, 0, -1, None)])])
    parts = offset_commit_ok_parts(name, index)
    if len(name.encode("utf-8")) >= 0x7F:
        assert frame is None and parts is None
    else:
        expected = general_answer(8, version, correlation, body)
        assert frame == expected
        assert parts is not None and parts[0] + correlation_bytes + parts[1] == expected
