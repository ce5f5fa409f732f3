"""The hand-written FetchResponse writer (flexible versions) agrees with kio byte for byte, and leaves to the
general encoder what it does not write.

Answers are generated as the fetch service builds them (topics by name or id, partitions with or without
errors, aborted transactions or none, records as bytes, a small memoryview or none); whenever the writer
writes one, its body must be kio's serialization of the same answer and the general encoder's.
"""

from __future__ import annotations

import os
import tempfile
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.protocol.build import build
from groupcoord.protocol.encode import SPLICE_MIN, EncodedBody, encode_body
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fetch_response import VERSIONS, write_body
from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.registry import encode_entity, response_class
from tests.support.full_run import examples

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
errors = st.sampled_from([ErrorCode.none, ErrorCode.offset_out_of_range, ErrorCode.unknown_topic_id,
                          ErrorCode.topic_authorization_failed, ErrorCode.kafka_storage_error,
                          ErrorCode.inconsistent_topic_id, ErrorCode.unknown_topic_or_partition])
# Short and long names (a length past one varint byte), ASCII and not.
names = st.one_of(st.text(max_size=12), st.text(min_size=120, max_size=140))
records = st.one_of(st.none(), st.binary(max_size=300), st.binary(min_size=130, max_size=200).map(memoryview))
aborted = st.one_of(st.none(), st.lists(st.fixed_dictionaries({"producer_id": int64, "first_offset": int64}),
                                        max_size=3))


@st.composite
def partitions(draw):
    return {"partition_index": draw(int32), "error_code": draw(errors), "high_watermark": draw(int64),
            "last_stable_offset": draw(int64), "log_start_offset": draw(int64),
            "aborted_transactions": draw(aborted), "preferred_read_replica": -1, "records": draw(records)}


@st.composite
def answers(draw):
    topics = draw(st.lists(st.fixed_dictionaries({"topic": names, "topic_id": st.uuids(),
                                                  "partitions": st.lists(partitions(), max_size=4)}),
                           max_size=4))
    return {"throttle_time": draw(st.integers(0, 2**31 - 1)), "error_code": draw(errors),
            "session_id": draw(int32), "responses": topics}


def kio_body(version: int, answer: dict) -> bytes:
    """kio's serialization of the same answer (records as bytes: kio's entities hold bytes)."""
    plain = {**answer, "responses": [
        {**t, "partitions": [{**p, "records": None if p["records"] is None else bytes(p["records"])}
                             for p in t["partitions"]]} for t in answer["responses"]]}
    return encode_entity(build(response_class(1, version), plain))


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(answer=answers())
def test_a_written_answer_is_kios_and_the_general_encoders(version, answer):
    written = write_body(version, answer)
    assert type(written) is EncodedBody
    assert bytes(written) == kio_body(version, answer)
    assert bytes(written) == bytes(encode_body(response_class(1, version), answer))


def test_an_older_version_is_left_to_the_general_encoder():
    answer = {"throttle_time": 0, "error_code": ErrorCode.none, "session_id": 0, "responses": []}
    assert write_body(11, answer) is None
    assert write_body(12, answer) is not None


def test_records_the_general_encoder_splices_are_left_to_it():
    """A memoryview of SPLICE_MIN bytes or more is cut around by the general encoder (sent uncopied), a
    FileRegion is sent with sendfile: the writer declines both, and a smaller view is written."""
    def answer(recs):
        return {"throttle_time": 0, "error_code": ErrorCode.none, "session_id": 5, "responses": [
            {"topic": "t", "topic_id": uuid.uuid4(), "partitions": [
                {"partition_index": 0, "error_code": ErrorCode.none, "high_watermark": 9, "last_stable_offset": 9,
                 "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
                 "records": recs}]}]}

    assert write_body(16, answer(memoryview(b"x" * SPLICE_MIN))) is None
    assert write_body(16, answer(memoryview(b"x" * (SPLICE_MIN - 1)))) is not None
    with tempfile.TemporaryFile() as f:
        f.write(b"y" * 100)
        f.flush()
        region = FileRegion(os.dup(f.fileno()), 0, 100)
        try:
            assert write_body(16, answer(region)) is None
        finally:
            region.close()


def test_an_answer_with_fields_the_writer_does_not_know_is_left_to_the_general_encoder():
    base = {"partition_index": 0, "error_code": ErrorCode.none, "high_watermark": 9, "last_stable_offset": 9,
            "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}
    tagged = {**base, "diverging_epoch": {"epoch": 3, "end_offset": 7}}
    answer = {"throttle_time": 0, "error_code": ErrorCode.none, "session_id": 0,
              "responses": [{"topic_id": uuid.uuid4(), "partitions": [tagged]}]}
    assert write_body(17, answer) is None
    assert write_body(17, {**answer, "responses": [{"topic_id": uuid.uuid4(), "partitions": [base]}]}) is not None
    assert write_body(17, {**answer, "node_endpoints": []}) is None
    assert write_body(17, {**answer, "throttle_time": None}) is None
