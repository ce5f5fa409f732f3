"""The Fetch handler's answer leaves written by the flexible versions' writer or as the dict for the general
encoder; either way the client gets the same frame."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from groupcoord.coordinator.apis.fetch import _written
from groupcoord.coordinator.server.dispatch import Dispatcher, RequestContext
from groupcoord.protocol.encode import EncodedBody
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch


def answer(error=ErrorCode.none, topic_error=ErrorCode.none):
    """A fetch service's answer: two topics, records, an aborted transaction, an erroneous partition."""
    records = encode_batch([(b"k", b"v" * 30, ()) for _ in range(3)], base_timestamp=1_000)
    part = {"partition_index": 0, "error_code": ErrorCode.none, "high_watermark": 3, "last_stable_offset": 3,
            "log_start_offset": 0, "aborted_transactions": [{"producer_id": 7, "first_offset": 1}],
            "preferred_read_replica": -1, "records": records}
    bad = {**part, "partition_index": 1, "error_code": topic_error, "high_watermark": -1, "last_stable_offset": -1,
           "log_start_offset": -1, "aborted_transactions": None, "records": b""}
    return {"throttle_time": 0, "error_code": error, "session_id": 12, "responses": [
        {"topic": "orders", "topic_id": uuid.UUID(int=1), "partitions": [part, bad]},
        {"topic": "audit", "topic_id": uuid.UUID(int=2), "partitions": [{**part, "records": memoryview(records)}]}]}


def services(quotas_enabled=None):
    quotas = None if quotas_enabled is None else SimpleNamespace(managers=SimpleNamespace(enabled=quotas_enabled))
    return SimpleNamespace(quotas=quotas)


def frame(version, body):
    ctx = RequestContext(1, version, 99, "c", "h", 1)
    return bytes(Dispatcher()._encode(ctx, body))


@pytest.mark.parametrize("version", [12, 13, 16, 17])
def test_a_flexible_answer_is_written_and_frames_as_the_general_encoder_does(version):
    written = _written(services(), version, answer())
    assert type(written) is EncodedBody
    assert frame(version, written) == frame(version, answer())


@pytest.mark.parametrize("version", [12, 17])
def test_with_client_quotas_the_dict_is_left_for_the_throttler(version):
    assert type(_written(services(quotas_enabled=True), version, answer())) is dict
    assert type(_written(services(quotas_enabled=False), version, answer())) is EncodedBody


def test_a_top_level_error_and_the_older_versions_take_the_general_encoder():
    """A written body is observed as NONE by the dispatcher: an answer with a top-level error stays a dict."""
    errored = answer(error=ErrorCode.invalid_fetch_session_epoch)
    assert _written(services(), 17, errored) is errored
    assert type(_written(services(), 17, answer(topic_error=ErrorCode.unknown_topic_id))) is EncodedBody
    assert type(_written(services(), 11, answer())) is dict
