"""The slice-at-a-time OffsetCommit reader and answer writer agree with kio, in every version served (v2-v9).

Requests: kio writes a generated request; the slices, joined, must hold the field values kio's reader reads,
whatever the slice size. Answers: the writer's body must be byte for byte what kio's writer makes of the same
answer. Malformed bodies (cut short, lying counts) raise ProtocolError and nothing else.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.protocol.build import build
from groupcoord.protocol.errors import ProtocolError
from groupcoord.protocol.headers import encode_request_header, parse_request_header
from groupcoord.protocol.sliced_requests import OffsetCommitAnswer, OffsetCommitSlices
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, request_reader, response_class
from groupcoord.protocol.values import as_ms
from tests.support.full_run import examples

VERSIONS = range(2, 10)
SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
text = st.one_of(st.text(max_size=8), st.text(min_size=125, max_size=135))
partitions = st.lists(st.tuples(int32, int64, int32, st.one_of(st.none(), text)), max_size=9)
topics = st.lists(st.tuples(text, partitions), max_size=4)


def request_body(version: int, group: str, generation: int, member: str, instance: str | None,
                 retention: int, topic_list: list) -> dict:
    return {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": instance, "retention_time": retention,
            "topics": [{"name": name, "partitions": [
                {"partition_index": p, "committed_offset": o, "committed_leader_epoch": e, "committed_metadata": m}
                for p, o, e, m in parts]} for name, parts in topic_list]}


def frame_of(version: int, body: dict) -> bytes:
    flexible = is_flexible(8, version)
    return encode_request_header(8, version, 3, "t", flexible) + encode_entity(build(request_class(8, version), body))


def kio_read(frame: bytes, version: int):
    header = parse_request_header(frame, is_flexible(8, version))
    return header.body_offset, request_reader(8, version)(frame, header.body_offset)[0]


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=st.one_of(st.none(), text),
       retention=st.one_of(st.just(-1), st.integers(0, 2**40)), topic_list=topics, slice_size=st.integers(1, 5))
def test_slices_read_what_kio_reads(version, group, generation, member, instance, retention, topic_list, slice_size):
    frame = frame_of(version, request_body(version, group, generation, member, instance, retention, topic_list))
    offset, kio = kio_read(frame, version)
    reader = OffsetCommitSlices(frame, offset, version)
    head = reader.head
    assert (head.group_id, head.generation_id_or_member_epoch, head.member_id) == (
        kio.group_id, kio.generation_id_or_member_epoch, kio.member_id)
    assert head.group_instance_id == getattr(kio, "group_instance_id", None)
    kio_retention = getattr(kio, "retention_time", None)
    assert head.retention_time_ms == (-1 if kio_retention is None else as_ms(kio_retention))
    assert reader.topic_count == len(kio.topics)
    joined: list[tuple[str, list]] = []
    current = -1
    for position, name, count, entries in reader.slices(slice_size):
        assert len(entries) <= slice_size
        if position != current:
            current = position
            joined.append((name, []))
        assert count == len(kio.topics[position].partitions)
        joined[-1][1].extend(entries)
    expected = [(t.name, [(int(p.partition_index), int(p.committed_offset),
                           int(getattr(p, "committed_leader_epoch", -1)), p.committed_metadata)
                          for p in t.partitions]) for t in kio.topics]
    assert joined == expected
    assert sum(1 for _ in reader.slices(slice_size, build=False)) >= len(kio.topics)


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(answers=st.lists(st.tuples(text, st.lists(st.tuples(int32, st.integers(-1, 120)), max_size=150)), max_size=4),
       throttle=st.integers(0, 2**31 - 1))
def test_answer_is_what_kio_writes(version, answers, throttle):
    writer = OffsetCommitAnswer(version, len(answers), throttle)
    for name, parts in answers:
        writer.topic(name, len(parts))
        writer.partitions(parts[:7])
        writer.partitions(parts[7:])
    body = {"throttle_time": throttle, "topics": [
        {"name": name, "partitions": [{"partition_index": p, "error_code": e} for p, e in parts]}
        for name, parts in answers]}
    if version < 3:
        body.pop("throttle_time")
    assert writer.body() == encode_entity(build(response_class(8, version), body))


def test_a_long_metadata_string_and_unknown_tagged_fields_are_read():
    """A metadata past one varint byte and a tagged field kio skips (flexible versions)."""
    body = request_body(8, "g", -1, "", None, -1, [("t", [(0, 5, -1, "m" * 300), (1, 6, 2, None)])])
    frame = frame_of(8, body)
    offset, _ = kio_read(frame, 8)
    reader = OffsetCommitSlices(frame, offset, 8)
    assert [e for _, _, _, es in reader.slices(10) for e in es] == [(0, 5, -1, "m" * 300), (1, 6, 2, None)]
    # the same request with an unknown tagged field (tag 5, two bytes) on the first partition
    end_of_first = frame.index(b"m" * 300) + 300
    assert frame[end_of_first] == 0
    tagged = frame[:end_of_first] + b"\x01\x05\x02hi" + frame[end_of_first + 1:]
    reader = OffsetCommitSlices(tagged, offset, 8)
    assert [e for _, _, _, es in reader.slices(10) for e in es] == [(0, 5, -1, "m" * 300), (1, 6, 2, None)]


@pytest.mark.parametrize("version", [2, 6, 8, 9])
def test_malformed_bodies_raise_protocol_error_only(version):
    body = request_body(version, "group", 1, "member", None, -1,
                        [("orders", [(p, p, -1, "meta") for p in range(20)]), ("other", [(0, 1, -1, "")])])
    frame = frame_of(version, body)
    offset, _ = kio_read(frame, version)
    for cut in range(offset, len(frame)):
        with pytest.raises(ProtocolError):
            reader = OffsetCommitSlices(frame[:cut], offset, version)
            for _ in reader.slices(7, build=False):
                pass
    # bytes after the body are ignored, as kio's reader ignores them
    assert sum(len(e) for *_, e in OffsetCommitSlices(frame + b"\x00", offset, version).slices(7)) == 21
    # a topics count claiming billions of entries is refused before anything is sized from it
    reader = OffsetCommitSlices(frame, offset, version)
    at = reader._topics_at - (1 if is_flexible(8, version) else 4)
    lying = frame[:at] + (b"\xff\xff\xff\x7f" if is_flexible(8, version) else b"\x7f\xff\xff\xff") + frame[
        reader._topics_at:]
    with pytest.raises(ProtocolError):
        OffsetCommitSlices(lying, offset, version)


# --------------------------------------------------------------------------- JoinGroup

JOIN_VERSIONS = range(0, 10)


@pytest.mark.parametrize("version", JOIN_VERSIONS)
@SETTINGS
@given(group=text, member=text, instance=st.one_of(st.none(), text), reason=st.one_of(st.none(), text),
       session=int32, rebalance=int32, protocol_type=text,
       protocols=st.lists(st.tuples(text, st.binary(max_size=140)), max_size=7), slice_size=st.integers(1, 4))
def test_join_group_slices_read_what_kio_reads(version, group, member, instance, reason, session, rebalance,
                                               protocol_type, protocols, slice_size):
    from groupcoord.protocol.sliced_requests import JoinGroupSlices

    body = {"group_id": group, "session_timeout": session, "rebalance_timeout": rebalance, "member_id": member,
            "group_instance_id": instance, "protocol_type": protocol_type, "reason": reason,
            "protocols": [{"name": n, "metadata": m} for n, m in protocols]}
    flexible = is_flexible(11, version)
    frame = encode_request_header(11, version, 3, "t", flexible) + encode_entity(build(request_class(11, version), body))
    header = parse_request_header(frame, flexible)
    kio = request_reader(11, version)(frame, header.body_offset)[0]
    reader = JoinGroupSlices(frame, header.body_offset, version)
    read = [p for chunk in reader.protocols(slice_size) for p in chunk]
    assert read == [(p.name, bytes(p.metadata)) for p in kio.protocols]
    assert (reader.group_id, reader.member_id, reader.protocol_type) == (kio.group_id, kio.member_id, kio.protocol_type)
    assert reader.session_timeout_ms == as_ms(kio.session_timeout)
    assert reader.rebalance_timeout_ms == (as_ms(kio.rebalance_timeout) if version >= 1 else -1)
    assert reader.group_instance_id == getattr(kio, "group_instance_id", None)
    assert reader.reason == getattr(kio, "reason", None)
    for cut in range(header.body_offset, len(frame), max(1, len(frame) // 40)):
        with pytest.raises(ProtocolError):
            for _ in JoinGroupSlices(frame[:cut], header.body_offset, version).protocols(slice_size):
                pass
