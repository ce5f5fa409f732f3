"""record_shapes.column_key_values (a batch of runs of records of one shape each, read column by column) against the
record-by-record reader it stands in for (record_batch._decode_key_value_list) and against decode_records: the same
(offset, key, value) whenever it reads a batch, None (the general loop then) for anything else, and never a batch
the general loop refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from groupcoord.protocol.record_batch import (HEADER_SIZE, CorruptBatchError, Record, _decode_key_value_list,
                                              decode_key_values, decode_records, encode_batch, encode_plain_batch,
                                              parse_header)
from groupcoord.protocol.record_shapes import MAX_RECORDS, MIN_AVERAGE_RUN, ONE_BYTE_DELTAS, column_key_values
from groupcoord.protocol.varint import decode_varlong


def columns(batch: bytes):
    """column_key_values of an uncompressed batch, as a list (None: declined)."""
    header = parse_header(batch)
    read = column_key_values(batch[HEADER_SIZE:], header.records_count, header.base_offset)
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
    """Null keys and values, headers, keys or values of several lengths among the records, timestamp deltas of
    more than one byte: declined unless every record is plain and the shapes' runs are long enough on average,
    and read as decode_records reads them either way."""
    batch = encode_batch(records, base_timestamp=0, timestamps=timestamps)
    expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
    assert list(decode_key_values(batch)) == expected
    read = columns(batch)
    plain = (all(k is not None and v is not None and not h for k, v, h in records)
             and all(ts < 64 for ts in (timestamps or [0])[:len(records)]))  # deltas from 0: one byte
    assert read == (expected if plain and turns(records) <= len(records) // MIN_AVERAGE_RUN + 2 else None)


def turns(records) -> int:
    """The runs of one shape among (key, value, headers) records, a run across row 64 counted twice (its two
    offset-delta widths are two layouts): what column_key_values reads one at a time."""
    shapes = [(len(k), len(v)) for k, v, _ in records]
    return 1 + sum(shapes[i] != shapes[i - 1] or i == ONE_BYTE_DELTAS for i in range(1, len(shapes)))


def runs_of(shapes_and_rows) -> list[tuple[bytes, bytes, tuple]]:
    """The records of consecutive runs, each ``rows`` records of one (key, value) shape: a coordinator batch of
    several commit requests."""
    records = []
    for (key, value), rows in shapes_and_rows:
        records += uniform_records(key, value, rows)
    return records


_NEAR = [b"\x00\x01" + b"g" * n for n in (10, 11, 12, 35, 36, 60, 61, 62, 63, 64, 70)]
run_shapes = st.tuples(st.sampled_from(_NEAR) | st.binary(min_size=1, max_size=140),
                       st.sampled_from([b"\x00\x03" + bytes(22), b"\x00\x03" + bytes(21), b"\x00\x03" + bytes(23),
                                        b"v" * 63, b"v" * 64]) | st.binary(max_size=140))
multi_runs = st.lists(st.tuples(run_shapes, st.one_of(st.integers(1, 140), st.sampled_from([1, 2, 63, 64, 65]))),
                      min_size=1, max_size=8)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(multi_runs, st.integers(min_value=0, max_value=2**40), st.integers(min_value=0, max_value=2**42))
def test_batches_of_runs_of_one_shape_are_read_by_columns_as_record_by_record(runs, base_offset, timestamp):
    """Several commit requests' records in one batch: runs of one shape each (keys one byte longer or shorter than
    the last run's, the same record length split differently between key and value, either side of 64 bytes and
    of the 64th row), read by columns to what the general loop and decode_records read, unless the runs are too
    short on average."""
    records = runs_of(runs)
    accepted = turns(records) <= len(records) // MIN_AVERAGE_RUN + 2 and len(records) <= MAX_RECORDS
    for batch in (encode_plain_batch(records, timestamp), encode_batch(records, base_timestamp=timestamp)):
        batch = bytearray(batch)
        batch[0:8] = base_offset.to_bytes(8, "big")
        batch = bytes(batch)
        expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
        assert record_by_record(batch) == expected
        assert columns(batch) == (expected if accepted else None)
        assert list(decode_key_values(batch)) == expected


@settings(max_examples=400, deadline=None, derandomize=True)
@given(multi_runs, st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=3))
def test_damaged_batches_of_runs_are_never_read_otherwise(runs, damage):
    """Bytes of a batch of several runs overwritten: whatever the columns read, the general loop reads the same;
    whatever it refuses, they decline; and decode_key_values refuses what decode_records refuses."""
    batch = bytearray(encode_plain_batch(runs_of(runs), 0))
    for where, byte in damage:
        batch[HEADER_SIZE + where % (len(batch) - HEADER_SIZE)] = byte
    check_decoders(bytes(batch))


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
    check_decoders(bytes(batch))


def check_decoders(batch: bytes) -> None:
    """The damage tests' property: the columns read what the record loop reads, or decline; decode_key_values
    refuses what decode_records refuses and reads what it reads."""
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
        assert column_key_values(payload, count, 0) is None


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


@pytest.mark.parametrize("key_len, other", [(35, 36), (36, 35), (70, 71)])
def test_every_byte_of_the_rows_either_side_of_a_run_boundary_damaged(key_len, other):
    """Runs of keys of two lengths (rows 0-29, 30-69, 70-99): every byte of the rows either side of each boundary,
    of rows 63 and 64 and of the last, overwritten with values around the varint boundaries and its own
    neighbours: the damage test's property for each; a key's or value's own byte is still read by columns."""
    value = b"\x00\x03" + bytes(22)
    records = runs_of([((b"\x00\x01" + b"g" * (key_len - 2), value), 30),
                       ((b"\x00\x01" + b"h" * (other - 2), value), 40),
                       ((b"\x00\x01" + b"g" * (key_len - 2), value), 30)])
    batch = encode_plain_batch(records, 0)
    starts = [HEADER_SIZE]  # each row's start, and the end of the last
    for _ in records:
        length, at = decode_varlong(batch, starts[-1])
        starts.append(at + length)
    assert starts[-1] == len(batch) and columns(batch) == record_by_record(batch)
    still_read = 0
    for row in (29, 30, 63, 64, 69, 70, 99):
        for at in range(starts[row], starts[row + 1]):
            for byte in {0x00, 0x01, 0x7F, 0x80, 0xFF, (batch[at] + 1) % 256, (batch[at] - 2) % 256}:
                if byte != batch[at]:
                    still_read += check_damaged(batch[:at] + bytes((byte,)) + batch[at + 1:])
    assert still_read


def test_runs_too_short_on_average_are_declined_and_read_record_by_record():
    """80 records may be read in 80 // MIN_AVERAGE_RUN + 2 runs (the first, and a run across row 64 read in two
    parts): 11 runs of alternating key lengths are, 12 are declined, and the record loop reads them as
    decode_records does."""
    value = b"\x00\x03" + bytes(22)
    count = 80
    for runs, read in ((count // MIN_AVERAGE_RUN + 1, True), (count // MIN_AVERAGE_RUN + 2, False)):
        rows = [count // runs + (i < count % runs) for i in range(runs)]
        records = runs_of([((b"k" * (10 + i % 2), value), n) for i, n in enumerate(rows)])
        assert len(records) == count and turns(records) == runs + 1  # no run ends at row 64
        batch = encode_plain_batch(records, 0)
        expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
        assert columns(batch) == (expected if read else None)
        assert list(decode_key_values(batch)) == expected
