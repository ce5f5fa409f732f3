"""The spelled-out encoders of the offset key and value write what the schema-driven writer writes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.coordinator.groups import offsets_records as records
from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
)

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
names = st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(group=names, topic=names, partition=int32)
def test_offset_key_is_the_generic_encoding(group, topic, partition):
    key = OffsetCommitKey(group, topic, partition)
    assert records.encode_key(key) == records._encode_key_generic(key)
    assert records.decode_key(records.encode_key(key)) == key


@settings(max_examples=300, deadline=None)
@given(offset=int64, epoch=int32, metadata=names, committed=int64, expire=st.one_of(st.none(), int64))
def test_offset_value_is_the_generic_encoding(offset, epoch, metadata, committed, expire):
    value = OffsetCommitValue(offset, epoch, metadata, committed, expire)
    assert records.encode_value(value) == records._encode_value_generic(value)
    for version in range(0, 5):
        assert records.encode_value(value, version) == records._encode_value_generic(value, version)


nullable_names = st.one_of(st.none(), names)
blobs = st.one_of(st.binary(max_size=40), st.binary(min_size=300, max_size=400))
members = st.lists(st.builds(MemberMetadata, member_id=names, group_instance_id=nullable_names, client_id=names,
                             client_host=names, rebalance_timeout=int32, session_timeout=int32,
                             subscription=blobs, assignment=blobs), max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(group=names)
def test_group_metadata_key_is_the_generic_encoding(group):
    key = GroupMetadataKey(group)
    assert records.encode_key(key) == records._encode_key_generic(key)
    assert records.decode_key(records.encode_key(key)) == key


@settings(max_examples=300, deadline=None)
@given(protocol_type=names, generation=int32, protocol=nullable_names, leader=nullable_names, timestamp=int64,
       members=members)
def test_group_metadata_value_is_the_generic_encoding(protocol_type, generation, protocol, leader, timestamp,
                                                      members):
    value = GroupMetadataValue(protocol_type, generation, protocol, leader, timestamp, members)
    assert records.encode_value(value) == records._encode_value_generic(value)
    for version in range(0, 5):
        assert records.encode_value(value, version) == records._encode_value_generic(value, version)
    key = GroupMetadataKey("g")
    assert records.decode_value(key, records.encode_value(value)) == value


def test_group_metadata_values_the_fast_writer_cannot_write_are_the_generic_writers_to_refuse():
    bad = GroupMetadataValue(None, 1, None, None, 0, ())  # type: ignore[arg-type]  # a null protocol type
    with pytest.raises(Exception) as generic:
        records._encode_value_generic(bad)
    with pytest.raises(type(generic.value)):
        records.encode_value(bad)


def _generic_group_value(raw: bytes):
    """What the generic reader makes of GroupMetadataValue bytes: the value, or the exception type it raises."""
    r = records._Reader(raw)
    try:
        version = r.int("int16")
        return records._read_struct(r, GroupMetadataValue, version)
    except Exception as exc:  # noqa: BLE001  (any refusal: the fast reader must refuse it too)
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(protocol_type=names, generation=int32, protocol=nullable_names, leader=nullable_names, timestamp=int64,
       members=members, trailing=st.binary(max_size=3))
def test_group_metadata_value_v3_reads_as_the_generic_reader_reads_it(protocol_type, generation, protocol, leader,
                                                                      timestamp, members, trailing):
    raw = records.encode_value(GroupMetadataValue(protocol_type, generation, protocol, leader, timestamp, members),
                               3) + trailing
    assert records._fast_group_value_v3(raw) == _generic_group_value(raw)
    assert records.decode_value(GroupMetadataKey("g"), raw) == _generic_group_value(raw)


@settings(max_examples=500, deadline=None)
@given(members=members, data=st.data())
def test_damaged_group_metadata_values_the_fast_reader_accepts_are_what_the_generic_reader_reads(members, data):
    """Cut short, or with a byte changed (a length made negative or overlong, a string made invalid UTF-8):
    the fast reader gives the generic reader's value or gives up (None) and leaves it to the generic reader."""
    raw = bytearray(records.encode_value(GroupMetadataValue("consumer", 3, "range", None, 7, members), 3))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(2, len(raw)))]
    else:
        at = data.draw(st.integers(2, len(raw) - 1))
        raw[at] = data.draw(st.sampled_from([0xFF, 0x80, 0x7F, 0x00, 0xC3]))
    fast = records._fast_group_value_v3(bytes(raw))
    generic = _generic_group_value(bytes(raw))
    if fast is not None:
        assert fast == generic
    elif isinstance(generic, type):  # refused: decode_value raises what the generic reader raises
        with pytest.raises(generic):
            records.decode_value(GroupMetadataKey("g"), bytes(raw))
    else:
        assert records.decode_value(GroupMetadataKey("g"), bytes(raw)) == generic
