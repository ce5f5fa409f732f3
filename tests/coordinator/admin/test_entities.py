"""Version-neutral request dicts shaped into the kio class of whichever version was negotiated."""

from __future__ import annotations

import datetime

from kio.schema.create_topics.v2.request import CreateTopicsRequest as CreateTopicsV2
from kio.schema.offset_commit.v2.request import OffsetCommitRequest as OffsetCommitV2
from kio.schema.offset_commit.v9.request import OffsetCommitRequest as OffsetCommitV9

from coordinator.admin.entities import build_entity

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
    old = build_entity(OffsetCommitV2, ADMIN_COMMIT)
    new = build_entity(OffsetCommitV9, ADMIN_COMMIT)
    assert old.retention_time == datetime.timedelta(milliseconds=-1)
    assert not hasattr(new, "retention_time")
    assert new.group_instance_id is None
    assert new.topics[0].partitions[0].committed_offset == 5
    assert not hasattr(old.topics[0].partitions[0], "committed_leader_epoch")


def test_omitted_fields_take_zero_values_and_millisecond_ints_become_timedeltas():
    request = build_entity(CreateTopicsV2, {"topics": [{"name": "t", "num_partitions": 3}], "timeout": 1500})
    topic = request.topics[0]
    assert (topic.replication_factor, topic.assignments, topic.configs) == (0, (), ())
    assert request.timeout == datetime.timedelta(milliseconds=1500)
