"""Handlers and clients write one version-neutral dict; `build` shapes it for whichever version is spoken."""

import datetime

import pytest

from groupcoord.protocol.build import build, error_response
from groupcoord.protocol.registry import request_class, response_class

ADMIN_COMMIT = {
    "group_id": "g",
    "generation_id_or_member_epoch": -1,
    "member_id": "",
    "group_instance_id": None,
    "retention_time": -1,
    "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                             "committed_leader_epoch": -1, "committed_metadata": ""}]}],
}


def test_fields_a_version_lacks_are_dropped():
    old = build(request_class(8, 2), ADMIN_COMMIT)
    new = build(request_class(8, 9), ADMIN_COMMIT)
    assert old.retention_time == datetime.timedelta(milliseconds=-1)
    assert not hasattr(new, "retention_time")
    assert new.group_instance_id is None
    assert new.topics[0].partitions[0].committed_offset == 5
    assert not hasattr(old.topics[0].partitions[0], "committed_leader_epoch")


def test_a_missing_required_field_fails_unless_the_caller_asks_for_zero_values():
    body = {"topics": [{"name": "t", "num_partitions": 3}], "timeout": 1500}
    with pytest.raises(KeyError, match="replication_factor"):
        build(request_class(19, 2), body)
    request = build(request_class(19, 2), body, fill_missing=True)
    topic = request.topics[0]
    assert (topic.replication_factor, topic.assignments, topic.configs) == (0, (), ())
    assert request.timeout == datetime.timedelta(milliseconds=1500)


def test_int_error_codes_and_epoch_milliseconds_become_kio_types():
    produce = build(response_class(0, 9), {"throttle_time": 0, "responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": 3, "base_offset": -1, "log_append_time": -1, "log_start_offset": -1,
         "record_errors": [], "error_message": None}]}]})
    partition = produce.responses[0].partition_responses[0]
    assert partition.error_code.name == "unknown_topic_or_partition"
    assert partition.log_append_time is None  # -1 is "no LogAppendTime"


def test_error_response_exists_only_where_the_response_has_a_top_level_error():
    assert error_response(response_class(12, 4), 35).error_code == 35
    assert error_response(response_class(3, 12), 35) is None
