"""The spelled-out encoders of the offset key and value write what the schema-driven writer writes."""

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.coordinator.groups import offsets_records as records
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue

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
