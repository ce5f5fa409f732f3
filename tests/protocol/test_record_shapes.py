"""record_shapes.uniform_key_values (a batch of one record shape read column by column) against the record-by-record
reader it stands in for (record_batch._decode_key_value_list) and against decode_records: the same (offset, key,
value) whenever it reads a batch, None (the general loop then) for anything else, and never a batch the general
loop refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from groupcoord.protocol.record_batch import (HEADER_SIZE, CorruptBatchError, Record, _decode_key_value_list,
                                              decode_key_values, decode_records, encode_batch, encode_plain_batch,
                                              parse_header)
from groupcoord.protocol.record_shapes import MAX_RECORDS, uniform_key_values
from groupcoord.protocol.varint import decode_varlong


def columns(batch: bytes):
    """uniform_key_values of an uncompressed batch, as a list (None: declined)."""
    header = parse_header(batch)
    read = uniform_key_values(batch[HEADER_SIZE:], header.records_count, header.base_offset)
    return None if read is None else list(read)


def record_by_record(batch: bytes):
    header = parse_header(batch)
    return _decode_key_value_list(batch[HEADER_SIZE:], header.records_count, header.base_offset)


def uniform_records(draw_key: bytes, draw_value: bytes, count: int) -> list[tuple[bytes, bytes, tuple]]:
    """``count`` records of one shape, each key and value distinct (the row's number written over their ends)."""
    return [(draw_key[:-2] + (i % 65536).to_bytes(2, "big") if len(draw_key) >= 2 else draw_key,
             (i % 251).to_bytes(1, "big") + draw_value[1:] if draw_value else draw_value, ()) for i in range(count)]


shapes = st.tuples(st.binary(max_size=140), st.binary(max_size=140),
                   st.one_of(st.integers(1, 140), st.sampled_from([63, 64, 65, 127, 128, 129, 300])))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(shapes, st.integers(min_value=0, max_value=2**40), st.integers(min_value=0, max_value=2**42))
def test_batches_of_one_shape_are_read_by_columns_as_record_by_record(shape, base_offset, timestamp):
    """Keys and values either side of 64 bytes (their lengths' one- and two-byte varints), empty ones, records
    either side of the 64th (one- and two-byte offset deltas): the coordinator's writer's batches, and
    encode_batch's, are read by columns, to what the general loop and decode_records read."""
    key, value, count = shape
    records = uniform_records(key, value, count)
    for batch in (encode_plain_batch(records, timestamp), encode_batch(records, base_timestamp=timestamp)):
        batch = bytearray(batch)
        batch[0:8] = base_offset.to_bytes(8, "big")
        batch = bytes(batch)
        expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
        assert columns(batch) == expected == record_by_record(batch)
        assert list(decode_key_values(batch)) == expected


def test_the_largest_batch_read_by_columns_and_the_next_one():
    records = uniform_records(b"\x00\x01group-and-topic", b"\x00\x03" + bytes(22), MAX_RECORDS + 1)
    for batch in (encode_plain_batch(records[:-1], 0), encode_batch(records, base_timestamp=0)):
        expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
        assert list(decode_key_values(batch)) == expected
        assert columns(batch) == (expected if len(expected) == MAX_RECORDS else None)


mixed = st.lists(st.tuples(st.none() | st.binary(max_size=70), st.none() | st.binary(max_size=70),
                           st.lists(st.tuples(st.text(max_size=3), st.none() | st.binary(max_size=3)), max_size=1)),
                 min_size=1, max_size=80)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(mixed, st.lists(st.integers(0, 2**20), min_size=80, max_size=80) | st.none())
def test_other_batches_are_read_record_by_record(records, timestamps):
    """Null keys and values, headers, keys or values of another length among the records, timestamp deltas of
    more than one byte: declined unless every record has the first one's shape, and read as decode_records
    reads them either way."""
    batch = encode_batch(records, base_timestamp=0, timestamps=timestamps)
    expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
    assert list(decode_key_values(batch)) == expected
    read = columns(batch)
    one_shape = (all(k is not None and v is not None and not h for k, v, h in records)
                 and len({(len(k), len(v)) for k, v, _ in records}) == 1
                 and all(ts < 64 for ts in (timestamps or [0])[:len(records)]))  # deltas from 0: one byte
    assert read == (expected if one_shape else None)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=100), st.integers(min_value=0, max_value=2**40))
def test_batches_with_offset_gaps_are_read_record_by_record(gaps, base_offset):
    """A compacted batch keeps its records' offsets, with gaps: its deltas are not 0, 1, 2, ..., so it is not read
    by columns (the column of deltas would not be the table's)."""
    offsets, at = [], base_offset
    for gap in gaps:
        offsets.append(at)
        at += 1 + gap
    records = [Record(offset, 0, b"key" + bytes(4), b"value-of-24-bytes-......", ()) for offset in offsets]
    batch = encode_batch(records, base_offset=base_offset, base_timestamp=0)
    expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
    assert list(decode_key_values(batch)) == expected == [(o, r.key, r.value) for o, r in zip(offsets, records)]
    assert columns(batch) == (expected if not any(gaps[:-1]) else None)  # (the last gap is past the batch)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(shapes, st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=3))
def test_damaged_batches_of_one_shape_are_never_read_otherwise(shape, damage):
    """Bytes of a batch of one shape overwritten (lengths, attributes, deltas, varints, keys, values, header
    counts): whatever the columns read, the general loop reads the same; whatever it refuses, they decline; and
    decode_key_values refuses what decode_records refuses."""
    key, value, count = shape
    batch = bytearray(encode_plain_batch(uniform_records(key, value, count), 0))
    for where, byte in damage:
        batch[HEADER_SIZE + where % (len(batch) - HEADER_SIZE)] = byte
    batch = bytes(batch)
    check_damaged(batch)
    try:
        full = [(r.offset, r.key, r.value) for r in decode_records(batch)]
    except CorruptBatchError:
        with pytest.raises(CorruptBatchError):
            list(decode_key_values(batch))
    else:
        assert list(decode_key_values(batch)) == full


@pytest.mark.parametrize("payload", [b"", b"\x00", b"\x82", b"\x82\x01\x00\x00\x00", b"\x02\x00\x00\x00\x81"])
def test_short_or_odd_sections_are_declined(payload):
    for count in (0, 1, 2):
        assert uniform_key_values(payload, count, 0) is None


def check_damaged(batch: bytes) -> bool:
    """The damage test's property for one batch; whether the columns read it."""
    read = columns(batch)
    try:
        expected = record_by_record(batch)
    except (IndexError, ValueError):
        assert read is None
    else:
        assert read is None or read == expected
    return read is not None


@pytest.mark.parametrize("key_len", [35, 70])
def test_every_byte_of_the_rows_either_side_of_the_delta_width_damaged(key_len):
    """Every byte of rows 0, 63 (the last one-byte offset delta), 64 (the first two-byte one) and the last
    overwritten with values around the varint boundaries and its own neighbours: the damage test's property,
    for each; the attributes (any byte) and the key's and value's own bytes are still read by columns."""
    records = uniform_records(b"\x00\x01" + b"g" * (key_len - 2), b"\x00\x03" + bytes(22), 70)
    batch = encode_plain_batch(records, 0)
    starts = [HEADER_SIZE]  # each row's start, and the end of the last
    for _ in records:
        length, at = decode_varlong(batch, starts[-1])
        starts.append(at + length)
    assert starts[-1] == len(batch) and columns(batch) is not None
    still_read = 0
    for row in (0, 63, 64, 69):
        for at in range(starts[row], starts[row + 1]):
            for byte in {0x00, 0x01, 0x7F, 0x80, 0xFF, (batch[at] + 1) % 256, (batch[at] - 2) % 256}:
                if byte != batch[at]:
                    still_read += check_damaged(batch[:at] + bytes((byte,)) + batch[at + 1:])
    assert still_read  # some damage (a key's or value's byte, the attributes) is still a batch of one shape


@pytest.mark.parametrize("change", ["trailing byte", "one record fewer", "one record more"])
def test_a_records_section_of_another_size_or_count_is_refused(change):
    """The rows must fill the records section exactly and number the header's count: a byte past them, or a
    count one off, and the general loop refuses the batch (the columns decline it)."""
    batch = bytearray(encode_plain_batch(uniform_records(b"\x00\x01key", b"\x00\x03" + bytes(22), 100), 0))
    if change == "trailing byte":
        batch += b"\x00"
        batch[8:12] = (len(batch) - 12).to_bytes(4, "big")
    else:
        count = int.from_bytes(batch[57:61], "big") + (1 if change == "one record more" else -1)
        batch[57:61] = count.to_bytes(4, "big")
    assert columns(bytes(batch)) is None
    with pytest.raises(CorruptBatchError):
        list(decode_key_values(bytes(batch)))
