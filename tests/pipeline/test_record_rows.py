"""Every kind of `__consumer_offsets` record becomes one row; odd records are labelled, not dropped."""

import json
import struct

from groupcoord.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.coordinator.groups.offsets_records import (
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    encode_key,
    encode_value,
)

from groupcoord.pipeline.record_rows import RowDecoder
from groupcoord.pipeline.schema import COLUMN_NAMES
from groupcoord.pipeline.segment_scan import scan_batches


def _rows(*batches: bytes) -> list[dict]:
    decoder = RowDecoder(7, "00000000000000000000.log")
    rows = []
    for item in scan_batches(b"".join(batches)):
        rows.extend(decoder.batch_rows(item))
    assert all(len(row) == len(COLUMN_NAMES) for row in rows)
    return [dict(zip(COLUMN_NAMES, row)) for row in rows]


def test_kip_848_records_keep_group_member_and_epoch_and_describe_the_rest():
    batch = encode_batch([
        (encode_key(ConsumerGroupMetadataKey("new-style")), encode_value(ConsumerGroupMetadataValue(epoch=4)), ()),
        (encode_key(ConsumerGroupMemberMetadataKey("new-style", "member-a")),
         encode_value(ConsumerGroupMemberMetadataValue("inst-a", None, "client-a", "/10.0.0.1", ("orders",))), ()),
        (encode_key(ConsumerGroupMemberMetadataKey("new-style", "member-b")), None, ()),
    ], base_timestamp=5)
    meta, member, gone = _rows(batch)
    assert (meta["kind"], meta["group"], meta["generation"]) == ("consumer_group_metadata", "new-style", 4)
    assert (member["kind"], member["member_id"]) == ("consumer_group_member_metadata", "member-a")
    assert json.loads(member["detail"])["subscribed_topic_names"] == ["orders"]
    assert (gone["kind"], gone["member_id"]) == ("consumer_group_member_metadata_tombstone", "member-b")


def test_unknown_record_types_and_undecodable_values_are_labelled():
    unknown_key = struct.pack(">h", 9) + b"share-group-stuff"
    bad_value = struct.pack(">h", 99) + b"\x00" * 8  # OffsetCommitValue has no version 99
    rows = _rows(encode_batch([
        (unknown_key, b"whatever", ()),
        (encode_key(OffsetCommitKey("g", "t", 0)), bad_value, ()),
    ], base_timestamp=5))
    assert [(r["kind"], r["group"]) for r in rows] == [("unknown", None), ("malformed", None)]
    assert json.loads(rows[0]["detail"]) == {"record_type": 9}
    assert "99" in rows[1]["error"]


def test_a_group_that_is_not_a_consumer_group_keeps_its_members_without_decoding_their_bytes():
    member = MemberMetadata("worker-1", None, "connect-1", "/10.0.0.2", 60_000, 10_000, b"\x00\x01opaque", b"")
    value = GroupMetadataValue("connect", 12, "sessioned", "worker-1", 99, (member,))
    (row,) = _rows(encode_batch([(encode_key(GroupMetadataKey("connect-cluster")), encode_value(value), ())],
                                base_timestamp=5))
    assert (row["protocol_type"], row["generation"], row["member_count"]) == ("connect", 12, 1)
    assert row["members"][0]["member_id"] == "worker-1" and row["members"][0]["subscribed_topics"] is None


def test_log_append_time_batches_stamp_every_record_with_the_broker_time():
    records = [(encode_key(OffsetCommitKey("g", "t", p)), encode_value(OffsetCommitValue(p, -1, "", 1, None)), ())
               for p in range(2)]
    batch = encode_batch(records, base_timestamp=1_000, timestamp_type=1, max_timestamp=77_000)
    assert [(r["timestamp"], r["batch_timestamp"], r["log_offset"]) for r in _rows(batch)] == [
        (77_000, 77_000, 0), (77_000, 77_000, 1)]


def test_transaction_markers_are_rows_of_their_own():
    marker = encode_batch([(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 3), ())], base_offset=40,
                          base_timestamp=5, producer_id=9, producer_epoch=0, is_transactional=True, is_control=True)
    (row,) = _rows(marker)
    assert (row["kind"], row["producer_id"], row["is_transactional"], row["log_offset"]) == ("txn_commit", 9, True, 40)


def test_share_group_records_are_decoded_with_their_group_member_and_epoch():
    import uuid

    from groupcoord.coordinator.groups.offsets_records import (
        ShareGroupCurrentMemberAssignmentKey,
        ShareGroupCurrentMemberAssignmentValue,
        ShareGroupMetadataKey,
        ShareGroupMetadataValue,
        ShareGroupStatePartitionMetadataKey,
        ShareGroupStatePartitionMetadataValue,
        TopicPartitions,
        TopicPartitionsInfo,
    )

    topic = uuid.UUID(int=7)
    batch = encode_batch([
        (encode_key(ShareGroupMetadataKey("queue")), encode_value(ShareGroupMetadataValue(3, 99)), ()),
        (encode_key(ShareGroupCurrentMemberAssignmentKey("queue", "m1")),
         encode_value(ShareGroupCurrentMemberAssignmentValue(3, 2, 0, (TopicPartitions(topic, (0, 1)),))), ()),
        (encode_key(ShareGroupStatePartitionMetadataKey("queue")),
         encode_value(ShareGroupStatePartitionMetadataValue((), (TopicPartitionsInfo(topic, "jobs", (0, 1)),), ())), ()),
        (encode_key(ShareGroupMetadataKey("queue")), None, ()),
    ], base_timestamp=5)
    meta, current, state, gone = _rows(batch)
    assert (meta["kind"], meta["group"], meta["generation"]) == ("share_group_metadata", "queue", 3)
    assert (current["kind"], current["member_id"], current["generation"]) == ("share_group_current_member_assignment", "m1", 3)
    assert json.loads(state["detail"])["initialized_topics"][0]["topic_name"] == "jobs"
    assert (state["kind"], gone["kind"]) == ("share_group_state_partition_metadata", "share_group_metadata_tombstone")


def test_every_share_group_record_type_is_decoded():
    """Kafka 4.3's six ShareGroup* record types in __consumer_offsets (10-15), each a row of its own kind with
    its group (and member where the key has one); none is unknown or malformed."""
    import uuid

    from groupcoord.coordinator.groups.offsets_records import (
        ShareGroupCurrentMemberAssignmentKey,
        ShareGroupCurrentMemberAssignmentValue,
        ShareGroupMemberMetadataKey,
        ShareGroupMemberMetadataValue,
        ShareGroupMetadataKey,
        ShareGroupMetadataValue,
        ShareGroupStatePartitionMetadataKey,
        ShareGroupStatePartitionMetadataValue,
        ShareGroupTargetAssignmentMemberKey,
        ShareGroupTargetAssignmentMemberValue,
        ShareGroupTargetAssignmentMetadataKey,
        ShareGroupTargetAssignmentMetadataValue,
        TopicPartitions,
    )

    topic = uuid.UUID(int=9)
    batch = encode_batch([
        (encode_key(ShareGroupMetadataKey("q")), encode_value(ShareGroupMetadataValue(4, 7)), ()),
        (encode_key(ShareGroupMemberMetadataKey("q", "m1")),
         encode_value(ShareGroupMemberMetadataValue(None, "client-1", "/127.0.0.1", ("jobs",))), ()),
        (encode_key(ShareGroupTargetAssignmentMetadataKey("q")), encode_value(ShareGroupTargetAssignmentMetadataValue(4)), ()),
        (encode_key(ShareGroupTargetAssignmentMemberKey("q", "m1")),
         encode_value(ShareGroupTargetAssignmentMemberValue((TopicPartitions(topic, (0,)),))), ()),
        (encode_key(ShareGroupCurrentMemberAssignmentKey("q", "m1")),
         encode_value(ShareGroupCurrentMemberAssignmentValue(4, 3, 0, (TopicPartitions(topic, (0,)),))), ()),
        (encode_key(ShareGroupStatePartitionMetadataKey("q")), encode_value(ShareGroupStatePartitionMetadataValue()), ()),
        (encode_key(ShareGroupMemberMetadataKey("q", "m1")), None, ()),
        (encode_key(ShareGroupTargetAssignmentMemberKey("q", "m1")), None, ()),
        (encode_key(ShareGroupCurrentMemberAssignmentKey("q", "m1")), None, ()),
        (encode_key(ShareGroupTargetAssignmentMetadataKey("q")), None, ()),
        (encode_key(ShareGroupStatePartitionMetadataKey("q")), None, ()),
    ], base_timestamp=5)
    rows = _rows(batch)
    assert [r["kind"] for r in rows] == [
        "share_group_metadata", "share_group_member_metadata", "share_group_target_assignment_metadata",
        "share_group_target_assignment_member", "share_group_current_member_assignment",
        "share_group_state_partition_metadata", "share_group_member_metadata_tombstone",
        "share_group_target_assignment_member_tombstone", "share_group_current_member_assignment_tombstone",
        "share_group_target_assignment_metadata_tombstone", "share_group_state_partition_metadata_tombstone"]
    assert {r["group"] for r in rows} == {"q"}
    assert [r["member_id"] for r in rows if "member" in r["kind"]] == ["m1"] * 6


def test_members_consumer_protocol_bytes_read_the_same_every_time_they_repeat():
    """A member's subscription and assignment bytes repeat from one generation's record to the next; the
    reader decodes each distinct pair once, and every row still gets what decoding them gives, including a
    refused assignment next to a readable subscription, and rows that do not share what a caller mutates."""
    subscription = encode_subscription(Subscription(("orders", "payments")))
    assignment = encode_assignment(Assignment((("orders", (0, 2)), ("payments", (1,)))))
    good = MemberMetadata("m1", None, "client", "/10.0.0.1", 45_000, 300_000, subscription, assignment)
    garbled = MemberMetadata("m2", None, "client", "/10.0.0.2", 45_000, 300_000, subscription, b"\x00\x01\xff")
    records = [(encode_key(GroupMetadataKey("g")),
                encode_value(GroupMetadataValue("consumer", generation, "range", "m1", 5, (good, garbled))), ())
               for generation in (1, 2)]
    first, second = _rows(encode_batch(records, base_timestamp=5))
    for row in (first, second):
        ok, refused = row["members"]
        assert ok["subscribed_topics"] == ["orders", "payments"]
        assert ok["assigned_partitions"] == [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 2},
                                             {"topic": "payments", "partition": 1}]
        assert ok["protocol_error"] is None
        assert refused["subscribed_topics"] == ["orders", "payments"]
        assert refused["assigned_partitions"] is None
        assert "cannot decode consumer protocol" in refused["protocol_error"]
    first["members"][0]["subscribed_topics"].append("mutated")
    assert second["members"][0]["subscribed_topics"] == ["orders", "payments"]
