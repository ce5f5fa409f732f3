"""The hand-written JoinGroup and SyncGroup codecs agree with kio, in every version they serve.

As for Heartbeat and OffsetCommit (test_fast_codecs.py): a request kio writes must read with the same field
values kio's reader gives (or be declined, and left to kio); an answer the fast writer writes must be byte
for byte the frame the general path (kio's writer behind the schema encoder) makes from the same dict.
"""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.coordinator.apis.join_group import group_join, join_request
from groupcoord.coordinator.apis.sync_group import sync_request
from groupcoord.coordinator.groups.requests import SyncGroup
from groupcoord.coordinator.groups.classic.responses import join_error, sync_error
from groupcoord.coordinator.server.dispatch import RequestContext
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.memo import Memo
from groupcoord.protocol.fast_codecs import JOIN_GROUP, SYNC_GROUP, read_join_group, read_sync_group
from tests.protocol.test_fast_codecs import (client_ids, general_answer, int32, kio_read, nullable_text, request_frame,
                                             text)
from tests.support.full_run import examples

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Metadata and assignments: empty, short, and past one and two varint bytes of length.
blobs = st.one_of(st.binary(max_size=20), st.binary(min_size=120, max_size=300),
                  st.binary(min_size=16_380, max_size=16_400))
errors = st.sampled_from([ErrorCode.none, ErrorCode.unknown_member_id, ErrorCode.member_id_required,
                          ErrorCode.rebalance_in_progress, ErrorCode.illegal_generation, 0, 25, 79])




def ctx(api_key: int, version: int, client_id: str | None) -> RequestContext:
    return RequestContext(api_key, version, 7, client_id, "127.0.0.1", 1)


def too_long(*values: str | None) -> bool:
    """A string whose compact length does not fit one varint byte: the fast reader leaves it to kio."""
    return any(v is not None and len(v.encode()) >= 0x7F for v in values)


# --------------------------------------------------------------------------- JoinGroup

protocols = st.lists(st.fixed_dictionaries({"name": text, "metadata": blobs}), max_size=3)


@pytest.mark.parametrize("version", JOIN_GROUP.versions)
@SETTINGS
@given(group=text, session=int32, rebalance=int32, member=text, instance=nullable_text, protocol_type=text,
       protocols=protocols, reason=nullable_text, client_id=client_ids)
def test_join_group_request_reads_as_kio_reads_it(version, group, session, rebalance, member, instance,
                                                  protocol_type, protocols, reason, client_id):
    body = {"group_id": group, "session_timeout": session, "rebalance_timeout": rebalance, "member_id": member,
            "group_instance_id": instance, "protocol_type": protocol_type, "protocols": protocols,
            "reason": reason}
    frame = request_frame(11, version, body, client_id)
    fast = JOIN_GROUP.read(frame, version)
    kio_client, kio_req = kio_read(frame, 11, version)
    if fast is None:
        assert too_long(group, member, instance, protocol_type, *(p["name"] for p in protocols),
                        reason if version >= 8 else None)
        assert read_join_group(frame, version) is None
        return
    client, req = fast
    assert client == kio_client
    # What the handler makes of either is the same request.
    expected = join_request(ctx(11, version, kio_client), kio_req)
    assert join_request(ctx(11, version, client), req) == expected
    # And so is what the lane makes of the reader's plain values (the same reader: it declines the same frames).
    lane = read_join_group(frame, version)
    assert lane is not None and lane[0] == kio_client
    _, group_id, session_ms, rebalance_ms, member_id, instance_id, protocol_type, protocol_list, why = lane
    assert group_join(version, kio_client, "/127.0.0.1", group_id, member_id, protocol_type, protocol_list,
                      session_ms, rebalance_ms, instance_id, why) == expected


@pytest.mark.parametrize("version", JOIN_GROUP.versions)
def test_join_group_reader_takes_the_common_request_and_declines_cut_ones(version):
    body = {"group_id": "g", "session_timeout": 45000, "rebalance_timeout": 300000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"\x00\x01" * 10}], "reason": None}
    frame = request_frame(11, version, body, "c")
    assert JOIN_GROUP.read(frame, version) is not None
    for cut in range(10, len(frame) - 1):
        assert JOIN_GROUP.read(frame[:cut], version) is None, cut
        assert read_join_group(frame[:cut], version) is None, cut
    assert JOIN_GROUP.read(frame.replace(b"\x02g", b"\x02\xff", 1), version) is None  # the group id, bad UTF-8


members = st.lists(st.fixed_dictionaries({"member_id": text, "group_instance_id": nullable_text,
                                          "metadata": blobs}), max_size=4)


@pytest.mark.parametrize("version", JOIN_GROUP.versions)
@SETTINGS
@given(throttle=int32, error=errors, generation=int32, protocol_type=nullable_text, protocol_name=nullable_text,
       leader=text, skip=st.booleans(), member=text, members=members, correlation=int32)
def test_join_group_answer_is_byte_for_byte_the_general_one(version, throttle, error, generation, protocol_type,
                                                            protocol_name, leader, skip, member, members,
                                                            correlation):
    body = {"throttle_time": throttle, "error_code": error, "generation_id": generation,
            "protocol_type": protocol_type, "protocol_name": protocol_name, "leader": leader,
            "skip_assignment": skip, "member_id": member, "members": members}
    fast = JOIN_GROUP.write(version, correlation, body)
    if fast is None:  # declined: only what the version cannot carry as given
        assert (version < 9 and skip) or (version < 7 and (protocol_name is None or protocol_type is not None))
        return
    assert fast == general_answer(11, version, correlation, body)


@pytest.mark.parametrize("version", JOIN_GROUP.versions)
def test_join_group_writer_writes_the_coordinators_error_answer(version):
    body = join_error("m-1", ErrorCode.member_id_required)
    if version < 7:
        body = {**body, "protocol_name": ""}  # as the handler gives it below v7
    assert JOIN_GROUP.write(version, 3, body) == general_answer(11, version, 3, body)
    assert JOIN_GROUP.write(version, 3, {**body, "extra": 1}) is None
    assert JOIN_GROUP.write(version, 3, object()) is None


# --------------------------------------------------------------------------- SyncGroup

assignments = st.lists(st.fixed_dictionaries({"member_id": text, "assignment": blobs}), max_size=4)


@pytest.mark.parametrize("version", SYNC_GROUP.versions)
@SETTINGS
@given(group=text, generation=int32, member=text, instance=nullable_text, protocol_type=nullable_text,
       protocol_name=nullable_text, assignments=assignments, client_id=client_ids)
def test_sync_group_request_reads_as_kio_reads_it(version, group, generation, member, instance, protocol_type,
                                                  protocol_name, assignments, client_id):
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": instance,
            "protocol_type": protocol_type, "protocol_name": protocol_name, "assignments": assignments}
    frame = request_frame(14, version, body, client_id)
    fast = SYNC_GROUP.read(frame, version)
    kio_client, kio_req = kio_read(frame, 14, version)
    if fast is None:
        assert too_long(group, member, instance, *(a["member_id"] for a in assignments),
                        *((protocol_type, protocol_name) if version >= 5 else ()))
        assert read_sync_group(frame, version) is None
        return
    client, req = fast
    assert client == kio_client
    expected = sync_request(ctx(14, version, kio_client), kio_req)
    assert sync_request(ctx(14, version, client), req) == expected
    lane = read_sync_group(frame, version)  # what the lane hands the group service
    assert lane is not None and lane[0] == kio_client
    _, group_id, generation, member_id, instance, protocol_type, protocol_name, assignments = lane
    assert SyncGroup(group_id, generation, member_id, assignments, instance, protocol_type, protocol_name,
                     version) == expected


@pytest.mark.parametrize("version", SYNC_GROUP.versions)
def test_sync_group_reader_takes_the_common_request_and_declines_cut_ones(version):
    body = {"group_id": "g", "generation_id": 1, "member_id": "m-1", "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": "m-1", "assignment": b"\x00\x01" * 5}]}
    frame = request_frame(14, version, body, "c")
    assert SYNC_GROUP.read(frame, version) is not None
    for cut in range(10, len(frame) - 1):
        assert SYNC_GROUP.read(frame[:cut], version) is None, cut
        assert read_sync_group(frame[:cut], version) is None, cut


@pytest.mark.parametrize("version", SYNC_GROUP.versions)
@SETTINGS
@given(throttle=int32, error=errors, protocol_type=nullable_text, protocol_name=nullable_text, assignment=blobs,
       correlation=int32)
def test_sync_group_answer_is_byte_for_byte_the_general_one(version, throttle, error, protocol_type, protocol_name,
                                                            assignment, correlation):
    body = {"throttle_time": throttle, "error_code": error, "protocol_type": protocol_type,
            "protocol_name": protocol_name, "assignment": assignment}
    fast = SYNC_GROUP.write(version, correlation, body)
    if fast is None:
        assert version < 5 and (protocol_type is not None or protocol_name is not None)
        return
    assert fast == general_answer(14, version, correlation, body)


@pytest.mark.parametrize("version", SYNC_GROUP.versions)
def test_sync_group_writer_writes_the_coordinators_error_answer(version):
    body = sync_error(ErrorCode.rebalance_in_progress)
    assert SYNC_GROUP.write(version, 9, body) == general_answer(14, version, 9, body)
    assert SYNC_GROUP.write(version, 9, {**body, "extra": 1}) is None


@pytest.mark.parametrize("version", JOIN_GROUP.versions)
def test_join_group_tails_are_remembered_by_their_bytes_and_bounded(version, monkeypatch):
    """The reader remembers what follows the group instance id by its bytes: a second member of the group
    reads its own group and member ids with the first one's protocols, a different reason or subscription is
    read anew, and the memory is emptied when full rather than grown."""
    from groupcoord.protocol import fast_codecs

    name = "_JOIN_TAILS_V8" if version >= 8 else "_JOIN_TAILS"
    kept = getattr(fast_codecs, name)
    tails = Memo(kept.compute, 3, kept.max_key_len)
    monkeypatch.setattr(fast_codecs, name, tails)

    def body(group: str, member: str, metadata: bytes, reason: str | None) -> dict:
        return {"group_id": group, "session_timeout": 45000, "rebalance_timeout": 300000, "member_id": member,
                "group_instance_id": None, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": metadata}], "reason": reason}

    seen = []
    for group, member, metadata, reason in [("g", "", b"\x00\x01", None), ("h", "m-1", b"\x00\x01", None),
                                            ("g", "m-2", b"\x00\x01", "why"), ("g", "m-3", b"\x00\x02", None),
                                            ("g", "m-4", b"\x00\x03", None), ("g", "m-5", b"\x00\x01", None)]:
        frame = request_frame(11, version, body(group, member, metadata, reason), "c")
        lane = read_join_group(frame, version)
        kio_client, kio_req = kio_read(frame, 11, version)
        assert lane is not None
        assert join_request(ctx(11, version, lane[0]), JOIN_GROUP.read(frame, version)[1]) == \
            join_request(ctx(11, version, kio_client), kio_req)
        assert lane[1:5] == (group, 45000, 300000, member)
        assert lane[7] == (("range", metadata),) and lane[8] == (reason if version >= 8 else None)
        seen.append(len(tails))
        assert len(tails) <= 3
    assert seen[:2] == [1, 1]  # the second group's member read the first one's tail, remembered
    assert 0 < seen[-1] <= 3


def test_compact_text_remembers_short_strings_within_its_bound(monkeypatch):
    """The strings the group answers repeat are encoded once: the bytes are the encoding's, a long string is
    not kept, and the memory is emptied when full."""
    from groupcoord.protocol import fast_codecs

    texts = Memo(fast_codecs._encode_compact_text, 2, fast_codecs.TEXT_MAX_CHARS)
    monkeypatch.setattr(fast_codecs, "_texts", texts)
    monkeypatch.setattr(fast_codecs, "_compact_text", texts.__getitem__)  # (the memo's own look-up)
    assert fast_codecs._compact_text("range") == b"\x06range"
    assert fast_codecs._compact_text("range") is fast_codecs._texts["range"]
    assert fast_codecs._compact_text("é") == b"\x03\xc3\xa9"
    long = "m" * (fast_codecs.TEXT_MAX_CHARS + 1)
    assert fast_codecs._compact_text(long) == bytes([len(long) + 1]) + long.encode()
    assert long not in fast_codecs._texts and len(fast_codecs._texts) == 2
    assert fast_codecs._compact_text("consumer") == b"\x09consumer"
    assert list(fast_codecs._texts) == ["consumer"]
    for not_text in (b"range", None, 7, ["range"]):  # no encode(), or unhashable: the writer declines
        with pytest.raises((AttributeError, TypeError)):
            fast_codecs._compact_text(not_text)
    assert list(fast_codecs._texts) == ["consumer"]


@pytest.mark.parametrize("version", SYNC_GROUP.versions)
def test_sync_group_short_tails_are_remembered_by_their_bytes_and_bounded(version, monkeypatch):
    """A follower's tail (no assignments) is remembered by its bytes and read back for another group's member;
    a leader's (naming members) past SYNC_TAIL_MAX_BYTES is read every time; the memory is emptied when full."""
    from groupcoord.protocol import fast_codecs

    name = "_SYNC_TAILS_V5" if version >= 5 else "_SYNC_TAILS"
    kept = getattr(fast_codecs, name)
    monkeypatch.setattr(fast_codecs, name, Memo(kept.compute, 2, kept.max_key_len))

    def read(group: str, member: str, name_: str, assignments: list) -> tuple:
        body = {"group_id": group, "generation_id": 3, "member_id": member, "group_instance_id": None,
                "protocol_type": "consumer", "protocol_name": name_, "assignments": assignments}
        frame = request_frame(14, version, body, "c")
        lane = read_sync_group(frame, version)
        kio_client, kio_req = kio_read(frame, 14, version)
        assert sync_request(ctx(14, version, kio_client), kio_req) == SyncGroup(
            lane[1], lane[2], lane[3], lane[7], lane[4], lane[5], lane[6], version)
        return lane

    assert read("g", "m-1", "range", [])[1:4] == ("g", 3, "m-1")
    assert len(getattr(fast_codecs, name)) == 1
    assert read("h", "m-2", "range", [])[1:4] == ("h", 3, "m-2")
    assert len(getattr(fast_codecs, name)) == 1  # the same tail
    leader = [{"member_id": f"member-{i}-" + "x" * 40, "assignment": b"\x00\x01"} for i in range(2)]
    lane = read("g", "m-1", "range", leader)
    assert lane[7] == tuple((a["member_id"], a["assignment"]) for a in leader)
    assert len(getattr(fast_codecs, name)) == 1  # too long to keep
    read("g", "m-1", "roundrobin", [])
    read("g", "m-1", "sticky", [])
    assert 0 < len(getattr(fast_codecs, name)) <= 2
