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
