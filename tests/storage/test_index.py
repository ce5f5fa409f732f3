"""Sparse indexes: lookups land at or before the wanted batch, files decode as Kafka writes them."""

import struct

import pytest

from groupcoord.storage.index import IndexFormatError, OffsetIndex, TimeIndex


def test_offset_lookup_returns_the_last_entry_at_or_below_the_target():
    index = OffsetIndex(base_offset=100)
    for last_offset, position in [(109, 0), (129, 4096), (149, 8200)]:
        index.append(last_offset, position)
    assert index.lookup(100) == 0
    assert index.lookup(128) == 0
    assert index.lookup(129) == 4096
    assert index.lookup(500) == 8200
    assert index.lookup(5) == 0


def test_offset_index_bytes_are_relative_offset_and_position_pairs():
    index = OffsetIndex(base_offset=1000)
    index.append(1009, 0)
    index.append(1020, 4200)
    assert index.to_bytes() == struct.pack(">iiii", 9, 0, 20, 4200)
    assert OffsetIndex.from_bytes(1000, index.to_bytes() + bytes(64), log_size=5000).positions.tolist() == [0, 4200]


def test_out_of_order_index_files_are_rejected_for_rebuild():
    with pytest.raises(IndexFormatError):
        OffsetIndex.from_bytes(0, struct.pack(">iiii", 9, 100, 5, 200), log_size=1000)
    with pytest.raises(IndexFormatError):
        OffsetIndex.from_bytes(0, struct.pack(">ii", 9, 5000), log_size=1000)


def test_time_index_only_grows_and_lookup_excludes_ties():
    index = TimeIndex(base_offset=0)
    index.maybe_append(100, 4)
    index.maybe_append(90, 6)   # not larger: ignored
    index.maybe_append(200, 9)
    assert len(index) == 2 and index.max_timestamp() == 200
    assert index.last_offset_before(100) is None
    assert index.last_offset_before(150) == 4
    assert index.last_offset_before(201) == 9
    assert TimeIndex.from_bytes(0, index.to_bytes()).timestamps.tolist() == [100, 200]
