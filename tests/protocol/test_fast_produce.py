"""The hand-written Produce codec agrees with kio in every version it serves (v3-v11).

Answers: whenever the fast writer writes a frame, it is byte for byte the frame of the general path (the schema
encoder behind the dispatcher, and kio's own writer of the built entity). Requests: the reader reads what kio
reads (tests/coordinator/apis/test_produce_fast.py compares them through the handler's own conversion); here,
the frames it must leave to kio: truncated ones, tagged fields, null arrays and strings where none is allowed.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.protocol.encode import encode_body
from groupcoord.protocol.fast_produce import VERSIONS, produce_reader, write_produce
from groupcoord.protocol.framing import frame_parts
from groupcoord.protocol.headers import encode_response_header
from groupcoord.protocol.registry import is_flexible, response_class
from tests.protocol.test_fast_codecs import general_answer, request_frame
from tests.support.full_run import examples

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
# Short and long (a length past one varint byte), ASCII and not.
text = st.one_of(st.text(max_size=12), st.text(min_size=120, max_size=300))
nullable_text = st.one_of(st.none(), text)
# kio's entity holds a datetime: -1 (none) or a time it can hold (the schema encoder writes any int64 as given)
append_times = st.one_of(st.just(-1), st.integers(0, 253_402_300_799_000))
errors = st.sampled_from([0, 1, 2, 3, 6, 10, 18, 19, 20, 29, 45, 46, 47, 53, 56, 87])

record_errors = st.lists(st.fixed_dictionaries({"batch_index": int32, "batch_index_error_message": nullable_text}),
                         max_size=3)
partition_answers = st.fixed_dictionaries({
    "index": int32, "error_code": errors, "base_offset": int64, "log_append_time": append_times, "log_start_offset": int64,
    "record_errors": st.one_of(st.just([]), record_errors), "error_message": st.one_of(st.none(), nullable_text)})
topic_answers = st.lists(st.fixed_dictionaries({"name": text, "partition_responses": st.lists(
    partition_answers, max_size=5)}), max_size=4)


def schema_encoder_answer(version: int, correlation_id: int, body: dict) -> bytes:
    """What the dispatcher's general path sends (Dispatcher._encode)."""
    header = encode_response_header(correlation_id, 0, is_flexible(0, version))
    return bytes(frame_parts(header, encode_body(response_class(0, version), body)))


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(topics=topic_answers, throttle=int32, correlation=int32)
def test_produce_answer_is_byte_for_byte_the_general_one(version, topics, throttle, correlation):
    body = {"responses": topics, "throttle_time": throttle}
    fast = write_produce(version, correlation, body)
    assert fast is not None
    assert fast == schema_encoder_answer(version, correlation, body)
    assert fast == general_answer(0, version, correlation, body)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(partition=partition_answers, count=st.integers(126, 130), name=st.text(min_size=200, max_size=249))
def test_counts_and_names_past_one_varint_byte_are_written_as_kio_writes_them(version, partition, count, name):
    topics = [{"name": name, "partition_responses": [partition] * count}] + [
        {"name": "t", "partition_responses": [partition]}] * (count - 1)
    body = {"responses": topics, "throttle_time": 0}
    fast = write_produce(version, 9, body)
    assert fast is not None and fast == general_answer(0, version, 9, body)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_writer_declines_answers_it_was_not_written_for(version):
    ok = {"index": 0, "error_code": 0, "base_offset": 5, "log_append_time": -1, "log_start_offset": 0,
          "record_errors": [], "error_message": None}
    assert write_produce(version, 1, {"responses": [{"name": "t", "partition_responses": [ok]}],
                                      "throttle_time": 0}) is not None
    leader = {**ok, "current_leader": {"leader_id": 1, "leader_epoch": 2}}
    declined = [
        {"responses": [], "throttle_time": 0, "node_endpoints": []},
        {"responses": [{"name": "t", "partition_responses": [leader]}], "throttle_time": 0},
        {"responses": [{"name": "t", "partition_responses": [{**ok, "base_offset": "5"}]}], "throttle_time": 0},
        {"responses": [{"name": b"t", "partition_responses": [ok]}], "throttle_time": 0},
        {"responses": [{"name": "t", "partition_responses": [ok], "extra": 1}], "throttle_time": 0},
        {"responses": [], "throttle_time": 2**31},
        {"responses": []},
        [],
    ]
    for response in declined:
        assert write_produce(version, 1, response) is None


def plain_reader():
    return produce_reader(lambda: (lambda name, partitions: (name, partitions), lambda index, records: (index, records)))


def produce_frame(version: int, topics: list, transactional_id: str | None = "tx", client_id: str | None = "c") -> bytes:
    return request_frame(0, version, {"transactional_id": transactional_id, "acks": -1, "timeout": 30000,
                                      "topic_data": topics}, client_id)


TOPICS = [{"name": "orders", "partition_data": [{"index": 0, "records": b"\x00" * 300},
                                                {"index": 3, "records": None}]},
          {"name": "audit", "partition_data": [{"index": 1, "records": b"abc"}]}]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_reader_takes_a_whole_request_and_no_truncation_of_it(version):
    read = plain_reader()
    frame = produce_frame(version, TOPICS)
    client_id, request = read(frame, version)
    assert (client_id, request.transactional_id, request.acks) == ("c", "tx", -1)
    assert request.topics == [("orders", ((0, b"\x00" * 300), (3, None))), ("audit", ((1, b"abc"),))]
    for cut in range(len(frame)):
        assert read(frame[:cut], version) is None


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= 9])
def test_tagged_fields_are_left_to_kio(version):
    read = plain_reader()
    frame = produce_frame(version, [{"name": "t", "partition_data": [{"index": 0, "records": b"xyz"}]}],
                          transactional_id=None, client_id=None)
    assert read(frame, version) is not None
    # the body's last byte is its (empty) tag buffer, and the one before it the topic's
    for at in (len(frame) - 1, len(frame) - 2, len(frame) - 3):
        tagged = bytearray(frame)
        tagged[at] = 1
        assert read(bytes(tagged), version) is None


@pytest.mark.parametrize("version", VERSIONS)
def test_null_arrays_and_names_are_left_to_kio(version):
    read = plain_reader()
    flexible = version >= 9
    head = request_frame(0, version, {"transactional_id": None, "acks": 1, "timeout": 0, "topic_data": []}, None)
    null_topics = head[:-2] + b"\x00\x00" if flexible else head[:-4] + struct.pack(">i", -1)
    assert read(head, version) is not None and read(null_topics, version) is None
    one = produce_frame(version, [{"name": "", "partition_data": []}], None, None)
    assert read(one, version) is not None
    name_at = len(head) - (2 if flexible else 4) + (1 if flexible else 4)
    null_name = bytearray(one)
    if flexible:
        null_name[name_at] = 0
    else:
        null_name[name_at:name_at + 2] = b"\xff\xff"
    assert read(bytes(null_name), version) is None


def test_only_whole_bytes_frames_are_read():
    frame = produce_frame(11, TOPICS)
    assert plain_reader()(memoryview(frame), 11) is None
