"""__consumer_offsets records decoded from bytes built by hand from the record schemas, and written as Kafka writes them."""

import struct
import uuid

import pytest

from groupcoord.coordinator.groups.offsets_records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    PartitionRacks,
    RecordFormatError,
    TopicMetadata,
    TopicPartitions,
    UnknownKey,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)


def i16(n): return struct.pack(">h", n)
def i32(n): return struct.pack(">i", n)
def i64(n): return struct.pack(">q", n)
def s(text): return i16(-1) if text is None else i16(len(text.encode())) + text.encode()
def b(data): return i32(len(data)) + data
def cs(text): return bytes([0]) if text is None else bytes([len(text.encode()) + 1]) + text.encode()  # compact string, short
def cb(data): return bytes([len(data) + 1]) + data


OFFSET_KEY = OffsetCommitKey("my-group", "orders", 3)
OFFSET_KEY_BYTES = i16(1) + s("my-group") + s("orders") + i32(3)


def test_offset_commit_key_is_written_as_record_type_1():
    assert encode_key(OFFSET_KEY) == OFFSET_KEY_BYTES
    assert decode_key(OFFSET_KEY_BYTES) == OFFSET_KEY


def test_legacy_offset_commit_key_type_0_reads_the_same():
    assert decode_key(i16(0) + s("my-group") + s("orders") + i32(3)) == OFFSET_KEY


@pytest.mark.parametrize(
    "version, body, expected",
    [
        (0, i64(42) + s("meta") + i64(1000), OffsetCommitValue(42, -1, "meta", 1000, None)),
        (1, i64(42) + s("meta") + i64(1000) + i64(5000), OffsetCommitValue(42, -1, "meta", 1000, 5000)),
        (2, i64(42) + s("meta") + i64(1000), OffsetCommitValue(42, -1, "meta", 1000, None)),
        (3, i64(42) + i32(7) + s("meta") + i64(1000), OffsetCommitValue(42, 7, "meta", 1000, None)),
        (4, i64(42) + i32(7) + cs("meta") + i64(1000) + b"\x00", OffsetCommitValue(42, 7, "meta", 1000, None)),
    ],
)
def test_every_offset_commit_value_version_is_readable(version, body, expected):
    assert decode_value(OFFSET_KEY, i16(version) + body) == expected


def test_offset_commit_value_v1_with_no_expiry_reads_as_none():
    assert decode_value(OFFSET_KEY, i16(1) + i64(1) + s("") + i64(9) + i64(-1)).expire_timestamp is None


def test_offset_values_are_written_v3_or_v1_when_an_expiry_is_set():
    assert encode_value(OffsetCommitValue(42, 7, "meta", 1000)) == i16(3) + i64(42) + i32(7) + s("meta") + i64(1000)
    assert encode_value(OffsetCommitValue(42, 7, "meta", 1000, 5000)) == i16(1) + i64(42) + s("meta") + i64(1000) + i64(5000)


def test_tombstones_stay_none():
    assert encode_value(None) is None
    assert decode_value(OFFSET_KEY, None) is None


MEMBER = MemberMetadata("m-1", "instance-1", "client", "/10.0.0.1", 30000, 10000, b"sub", b"assign")


def _member_bytes(version):
    out = s("m-1")
    if version >= 3:
        out += s("instance-1")
    out += s("client") + s("/10.0.0.1")
    if version >= 1:
        out += i32(30000)
    return out + i32(10000) + b(b"sub") + b(b"assign")


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_every_non_flexible_group_metadata_value_version_is_readable(version):
    body = s("consumer") + i32(4) + s("range") + s("m-1")
    if version >= 2:
        body += i64(123456)
    body += i32(1) + _member_bytes(version)
    value = decode_value(GroupMetadataKey("g"), i16(version) + body)
    assert value.protocol_type == "consumer" and value.generation == 4 and value.protocol == "range" and value.leader == "m-1"
    assert value.current_state_timestamp == (123456 if version >= 2 else -1)
    member = value.members[0]
    assert member.group_instance_id == ("instance-1" if version >= 3 else None)
    assert member.rebalance_timeout == (30000 if version >= 1 else -1)
    assert (member.subscription, member.assignment) == (b"sub", b"assign")


def test_flexible_group_metadata_value_v4_is_readable():
    member = cs("m-1") + cs("instance-1") + cs("client") + cs("/10.0.0.1") + i32(30000) + i32(10000) + cb(b"sub") + cb(b"assign") + b"\x00"
    body = cs("consumer") + i32(4) + cs(None) + cs(None) + i64(5) + bytes([2]) + member + b"\x00"
    value = decode_value(GroupMetadataKey("g"), i16(4) + body)
    assert value == GroupMetadataValue("consumer", 4, None, None, 5, (MEMBER,))


def test_group_metadata_is_written_as_v3_and_round_trips():
    value = GroupMetadataValue("consumer", 4, "range", "m-1", 123456, (MEMBER,))
    data = encode_value(value)
    assert data[:2] == i16(3)
    assert data == i16(3) + s("consumer") + i32(4) + s("range") + s("m-1") + i64(123456) + i32(1) + _member_bytes(3)
    assert decode_value(GroupMetadataKey("g"), data) == value
    assert encode_key(GroupMetadataKey("g")) == i16(2) + s("g")


def test_empty_group_metadata_has_null_protocol_and_leader():
    value = GroupMetadataValue("consumer", 2, None, None, 99, ())
    assert encode_value(value) == i16(3) + s("consumer") + i32(2) + i16(-1) + i16(-1) + i64(99) + i32(0)


UID = uuid.UUID("12345678-1234-5678-1234-567812345678")


@pytest.mark.parametrize(
    "key, key_bytes, value",
    [
        (ConsumerGroupMetadataKey("g"), i16(3) + s("g"), ConsumerGroupMetadataValue(7)),
        (
            ConsumerGroupPartitionMetadataKey("g"),
            i16(4) + s("g"),
            ConsumerGroupPartitionMetadataValue((TopicMetadata(UID, "orders", 3, (PartitionRacks(0, ("r1",)),)),)),
        ),
        (
            ConsumerGroupMemberMetadataKey("g", "m"),
            i16(5) + s("g") + s("m"),
            ConsumerGroupMemberMetadataValue(
                "i", None, "c", "h", ("orders",), None, 5000, "uniform",
                ClassicMemberMetadata(10000, (ClassicProtocol("range", b"x"),)),
            ),
        ),
        (ConsumerGroupTargetAssignmentMetadataKey("g"), i16(6) + s("g"), ConsumerGroupTargetAssignmentMetadataValue(3)),
        (
            ConsumerGroupTargetAssignmentMemberKey("g", "m"),
            i16(7) + s("g") + s("m"),
            ConsumerGroupTargetAssignmentMemberValue((TopicPartitions(UID, (0, 1)),)),
        ),
        (
            ConsumerGroupCurrentMemberAssignmentKey("g", "m"),
            i16(8) + s("g") + s("m"),
            ConsumerGroupCurrentMemberAssignmentValue(4, 3, 0, (TopicPartitions(UID, (2,)),), ()),
        ),
    ],
)
def test_kip_848_records_round_trip(key, key_bytes, value):
    assert encode_key(key) == key_bytes
    assert decode_key(key_bytes) == key
    assert decode_value(key, encode_value(value)) == value


def test_consumer_group_metadata_value_bytes_from_the_schema():
    assert encode_value(ConsumerGroupMetadataValue(7)) == i16(0) + i32(7) + b"\x00"


def test_member_metadata_classic_tag_is_a_tagged_field_and_unknown_tags_are_skipped():
    key = ConsumerGroupMemberMetadataKey("g", "m")
    plain = ConsumerGroupMemberMetadataValue("i", None, "c", "h", (), None, -1, None, None)
    data = encode_value(plain)
    # As Kafka 4.3.1 writes it (its generated code always writes this tag): one tagged field, tag 0, one byte,
    # the null marker 0.
    assert data.endswith(bytes([1, 0, 1, 0]))
    with_unknown_tag = data[:-4] + bytes([2, 0, 1, 0, 9, 2]) + b"zz"
    assert decode_value(key, with_unknown_tag) == plain


def test_member_metadata_as_kafka_4_3_1_wrote_it():
    """Bytes copied from a Kafka 4.3.1 broker's __consumer_offsets (a consumer-protocol member, decoded by
    Kafka's DumpLogSegments as classicMemberMetadata null)."""
    raw = bytes.fromhex(
        "000000001767726f7570636f6f72642d636f6e666f726d616e63650b2f3132372e302e302e310227636f6e666f726d616e6365"
        "2d746f7069632d63672d70726576696f75732d613663643238363701000075300001000100")
    value = decode_value(ConsumerGroupMemberMetadataKey("g", "m"), raw)
    assert value == ConsumerGroupMemberMetadataValue(
        None, None, "groupcoord-conformance", "/127.0.0.1", ("conformance-topic-cg-previous-a6cd2867",), "",
        30000, None, None)
    assert encode_value(value) == raw


def test_a_classic_member_s_metadata_carries_a_presence_marker():
    key = ConsumerGroupMemberMetadataKey("g", "m")
    classic = ConsumerGroupMemberMetadataValue("i", None, "c", "h", ("t",), None, 5000, None,
                                               ClassicMemberMetadata(45000, (ClassicProtocol("range", b"\x01"),)))
    data = encode_value(classic)
    assert decode_value(key, data) == classic
    # session timeout, the protocols array (length, then "range", b"\x01" and that entry's tag count), tag count
    struct_bytes = 4 + 1 + (6 + 2 + 1) + 1
    assert data[-(struct_bytes + 4):-struct_bytes] == bytes([1, 0, struct_bytes + 1, 1]), \
        "one tagged field, tag 0, then the presence marker 1 before the struct"


def test_unknown_record_types_are_reported_not_failed():
    raw = i16(9) + s("share-group")  # Kafka 4.0's ShareGroupPartitionMetadata, no longer written
    assert decode_key(raw) == UnknownKey(9, raw)


def test_malformed_record_of_a_known_type_fails_loudly():
    with pytest.raises(RecordFormatError):
        decode_key(i16(1) + s("my-group") + i16(50))
    with pytest.raises(RecordFormatError):
        decode_value(OFFSET_KEY, i16(9) + i64(1))


def test_decode_record_leaves_values_of_unknown_types_uninterpreted():
    from groupcoord.coordinator.groups.offsets_records import decode_record

    assert decode_record(OFFSET_KEY_BYTES, None) == (OFFSET_KEY, None)
    key, value = decode_record(i16(9) + s("x"), b"\x00\x00garbage")
    assert isinstance(key, UnknownKey) and value is None


# --- the fast path for offset commits must agree with the schema walk on every input -----------------

from hypothesis import given, settings, strategies as st_  # noqa: E402

from groupcoord.coordinator.groups import offsets_records as _records  # noqa: E402


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    offset=st_.integers(-(2**63), 2**63 - 1),
    epoch=st_.integers(-(2**31), 2**31 - 1),
    metadata=st_.text(max_size=40),
    commit=st_.integers(-(2**63), 2**63 - 1),
    expire=st_.one_of(st_.none(), st_.integers(0, 2**63 - 1)),
    version=st_.integers(0, 4),
    group=st_.text(max_size=20),
    topic=st_.text(max_size=20),
    partition=st_.integers(-(2**31), 2**31 - 1),
)
def test_the_offset_commit_fast_path_reads_exactly_what_the_schema_reader_reads(
    offset, epoch, metadata, commit, expire, version, group, topic, partition
):
    key = _records.OffsetCommitKey(group, topic, partition)
    value = _records.OffsetCommitValue(offset, epoch if version >= 3 else -1, metadata, commit, expire if version == 1 else None)
    raw_key, raw_value = _records.encode_key(key), _records.encode_value(value, version)
    r = _records._Reader(raw_key)
    r.int("int16")
    assert _records.decode_key(raw_key) == _records._read_struct(r, _records.OffsetCommitKey, 1) == key
    r = _records._Reader(raw_value)
    r.int("int16")
    slow = _records._read_struct(r, _records.OffsetCommitValue, version)
    if slow.expire_timestamp == -1:
        slow = _records.OffsetCommitValue(slow.offset, slow.leader_epoch, slow.metadata, slow.commit_timestamp, None)
    assert _records.decode_value(key, raw_value) == slow == value


def test_a_truncated_offset_value_still_fails_with_the_schema_readers_error():
    raw = _records.encode_value(_records.OffsetCommitValue(5, 1, "meta", 7), 3)
    with pytest.raises(_records.RecordFormatError):
        _records.decode_value(_records.OffsetCommitKey("g", "t", 0), raw[:-3])


def test_target_assignment_metadata_carries_kafka_43s_timestamp_as_tagged_field_0():
    """Kafka 4.3.1's ConsumerGroupTargetAssignmentMetadataValue.write: epoch, then the tagged fields — the
    timestamp (tag 0, 8 bytes) only when it is not 0 — so a record from before 4.3 still reads (as 0)."""
    key = ConsumerGroupTargetAssignmentMetadataKey("g")
    stamped = ConsumerGroupTargetAssignmentMetadataValue(3, 1_764_000_000_123)
    data = encode_value(stamped)
    assert data == i16(0) + (3).to_bytes(4, "big") + bytes([1, 0, 8]) + (1_764_000_000_123).to_bytes(8, "big")
    assert decode_value(key, data) == stamped
    plain = encode_value(ConsumerGroupTargetAssignmentMetadataValue(3))
    assert plain == i16(0) + (3).to_bytes(4, "big") + bytes([0])
    assert decode_value(key, plain) == ConsumerGroupTargetAssignmentMetadataValue(3, 0)
