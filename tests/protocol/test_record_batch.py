"""Record batch v2: byte-exact encoding, decoding, CRC and what other clients make of our bytes."""

import struct

import pytest
from crc32c import crc32c
from hypothesis import given, settings, strategies as st

from groupcoord.protocol.compression import CompressionType
from groupcoord.protocol.record_batch import (
    HEADER_SIZE, CorruptBatchError, Record, decode_records, encode_batch, iter_batches, parse_header,
    set_base_offset, set_log_append_time, verify_crc,
)


def hand_built_batch() -> bytes:
    """One record (key b"k", value b"val", header h=1) at offset 16, timestamp 1000, written field by field."""
    record_body = bytes.fromhex(
        "00"        # attributes
        "00"        # timestampDelta 0
        "00"        # offsetDelta 0
        "02" "6b"   # keyLength 1, "k"
        "06" "76616c"  # valueLength 3, "val"
        "02"        # 1 header
        "02" "68"   # header key length 1, "h"
        "02" "31"   # header value length 1, "1"
    )
    record = bytes([len(record_body) * 2]) + record_body  # zig-zag length
    after_crc = (bytes.fromhex("0000" "00000000") + (1000).to_bytes(8, "big") + (1000).to_bytes(8, "big")
                 + bytes.fromhex("ffffffffffffffff" "ffff" "ffffffff" "00000001") + record)
    crc = crc32c(after_crc)
    batch_length = 4 + 1 + 4 + len(after_crc)
    return ((16).to_bytes(8, "big") + batch_length.to_bytes(4, "big") + bytes.fromhex("ffffffff") + b"\x02"
            + crc.to_bytes(4, "big") + after_crc)


def test_encoder_reproduces_the_hand_built_batch_byte_for_byte():
    encoded = encode_batch([(b"k", b"val", [("h", b"1")])], base_offset=16, base_timestamp=1000)
    assert encoded == hand_built_batch()


def test_hand_built_batch_decodes_to_its_fields():
    batch = hand_built_batch()
    header = parse_header(batch)
    assert (header.base_offset, header.magic, header.records_count, header.last_offset) == (16, 2, 1, 16)
    assert header.size == len(batch) and header.base_timestamp == header.max_timestamp == 1000
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert verify_crc(batch)
    assert decode_records(batch) == [Record(16, 1000, b"k", b"val", (("h", b"1"),))]


def test_null_keys_values_and_header_values_survive_a_round_trip():
    batch = encode_batch([(None, None, [("n", None)]), (b"", b"", ())], base_offset=7, timestamps=[5, 9])
    assert decode_records(batch) == [Record(7, 5, None, None, (("n", None),)), Record(8, 9, b"", b"", ())]
    header = parse_header(batch)
    assert (header.base_timestamp, header.max_timestamp, header.last_offset_delta) == (5, 9, 1)


@pytest.mark.parametrize("codec", list(CompressionType))
def test_compressed_batches_round_trip(codec):
    records = [(b"key-%d" % i, b"value-%d" % i * 20, [("trace", b"%d" % i)]) for i in range(200)]
    batch = encode_batch(records, compression=codec, base_timestamp=123)
    header = parse_header(batch)
    assert header.compression == codec and header.records_count == 200
    decoded = decode_records(batch)
    assert [(r.key, r.value, r.headers) for r in decoded] == [(k, v, tuple(h)) for k, v, h in records]
    assert [r.offset for r in decoded] == list(range(200))


def test_attribute_flags_and_producer_fields_are_kept():
    batch = encode_batch([(b"k", b"v", ())], producer_id=42, producer_epoch=3, base_sequence=17,
                         is_transactional=True, timestamp_type=1, partition_leader_epoch=5)
    header = parse_header(batch)
    assert header.is_transactional and not header.is_control and header.timestamp_type == 1
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, 17)
    assert header.partition_leader_epoch == 5


def test_setting_the_base_offset_keeps_the_crc_valid():
    batch = bytearray(encode_batch([(b"a", b"1", ()), (b"b", b"2", ())]))
    set_base_offset(batch, 0, 1_000_000)
    assert verify_crc(batch)
    assert [r.offset for r in decode_records(batch)] == [1_000_000, 1_000_001]


def test_log_append_time_restamps_and_re_checksums():
    batch = bytearray(encode_batch([(b"a", b"1", ())], base_timestamp=10))
    set_log_append_time(batch, 0, 99_999)
    header = parse_header(batch)
    assert header.timestamp_type == 1 and header.max_timestamp == 99_999 and verify_crc(batch)


def test_iter_batches_walks_back_to_back_batches_with_positions():
    first = encode_batch([(b"a", b"1", ())], base_offset=0)
    second = encode_batch([(b"b", b"2", ()), (b"c", b"3", ())], base_offset=1)
    walked = list(iter_batches(first + second))
    assert [(pos, h.base_offset, h.records_count) for pos, h in walked] == [(0, 0, 1), (len(first), 1, 2)]


def test_a_flipped_bit_is_caught_by_the_crc_with_its_position():
    good = encode_batch([(b"a", b"1", ())])
    bad = bytearray(good + good)
    bad[len(good) + HEADER_SIZE + 3] ^= 0x01
    assert verify_crc(bad, 0) and not verify_crc(bad, len(good))
    with pytest.raises(CorruptBatchError) as caught:
        list(iter_batches(bad))
    assert caught.value.offset == len(good)
    assert len(list(iter_batches(bad, verify=False))) == 2


def test_truncated_batches_and_wrong_magic_are_refused():
    good = encode_batch([(b"a", b"1", ())])
    with pytest.raises(CorruptBatchError, match="cut short"):
        list(iter_batches(good[:-1]))
    with pytest.raises(CorruptBatchError, match="header needs"):
        parse_header(good[:30])
    legacy = bytearray(good)
    legacy[16] = 1
    with pytest.raises(CorruptBatchError, match="magic 1"):
        parse_header(legacy)


def test_records_that_do_not_add_up_to_their_length_are_corrupt():
    batch = bytearray(encode_batch([(b"abc", b"1", ())], base_timestamp=0))
    batch[HEADER_SIZE] += 2  # claim a longer record than the batch holds
    with pytest.raises(CorruptBatchError):
        decode_records(batch)


def test_empty_batch_keeps_its_offset_span():
    batch = encode_batch([], base_offset=50, last_offset_delta=9, base_timestamp=7, producer_id=4)
    header = parse_header(batch)
    assert header.records_count == 0 and header.last_offset == 59 and decode_records(batch) == []


def test_kio_reads_our_batches_and_agrees_on_every_field():
    from kio.records.readers import read_batch

    batch = encode_batch([(b"k1", b"v1", [("h", b"x")]), (None, b"v2", ())], base_offset=100,
                         timestamps=[1_700_000_000_000, 1_700_000_001_000])
    parsed, size = read_batch(batch, 0)
    assert size == len(batch)
    assert parsed.base_offset == 100 and parsed.last_offset_delta == 1 and parsed.crc == crc32c(batch[21:])
    assert [(r.offset, r.key, r.value) for r in parsed.records] == [(100, b"k1", b"v1"), (101, None, b"v2")]


@pytest.mark.parametrize("codec", list(CompressionType))
def test_aiokafka_reads_our_batches_for_every_codec(codec):
    from aiokafka.record.default_records import _DefaultRecordBatchPy

    batch = encode_batch([(b"k%d" % i, b"v%d" % i, [("h", b"1")]) for i in range(50)], compression=codec,
                         base_offset=9, base_timestamp=1000)
    theirs = _DefaultRecordBatchPy(batch)
    assert theirs.validate_crc()
    assert [(r.offset, r.key, r.value, r.timestamp) for r in theirs] == [
        (9 + i, b"k%d" % i, b"v%d" % i, 1000) for i in range(50)]


@pytest.mark.parametrize("codec", list(CompressionType))
def test_we_read_batches_built_by_aiokafka_for_every_codec(codec):
    from aiokafka.record.default_records import _DefaultRecordBatchBuilderPy

    builder = _DefaultRecordBatchBuilderPy(magic=2, compression_type=codec, is_transactional=0, producer_id=7,
                                           producer_epoch=1, base_sequence=0, batch_size=1 << 20)
    for i in range(30):
        builder.append(i, timestamp=5000 + i, key=b"k%d" % i, value=b"value" * i, headers=[("h", b"%d" % i)])
    batch = bytes(builder.build())
    assert verify_crc(batch)
    records = decode_records(batch)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records] == [
        (i, 5000 + i, b"k%d" % i, b"value" * i, (("h", b"%d" % i),)) for i in range(30)]


record_strategy = st.tuples(st.none() | st.binary(max_size=40), st.none() | st.binary(max_size=200),
                            st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)),
                                     max_size=3))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(record_strategy, min_size=1, max_size=20), st.sampled_from(list(CompressionType)),
       st.integers(min_value=0, max_value=2**40))
def test_any_records_round_trip(records, codec, base_offset):
    batch = encode_batch(records, compression=codec, base_offset=base_offset, base_timestamp=77)
    assert verify_crc(batch)
    decoded = decode_records(batch)
    assert [(r.key, r.value, r.headers) for r in decoded] == [(k, v, tuple(h)) for k, v, h in records]
    assert decoded[-1].offset == parse_header(batch).last_offset == base_offset + len(records) - 1


def test_header_layout_matches_the_spec_table():
    batch = encode_batch([(b"k", b"v", ())], base_offset=3, base_timestamp=11, producer_id=9)
    assert struct.unpack_from(">q", batch, 0)[0] == 3
    assert struct.unpack_from(">i", batch, 8)[0] == len(batch) - 12
    assert batch[16] == 2
    assert struct.unpack_from(">I", batch, 17)[0] == crc32c(batch[21:])
    assert struct.unpack_from(">q", batch, 27)[0] == 11
    assert struct.unpack_from(">q", batch, 43)[0] == 9
    assert struct.unpack_from(">i", batch, 57)[0] == 1


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.ZSTD])
def test_key_scan_agrees_with_full_decoding(codec):
    from groupcoord.protocol.record_batch import decode_keys

    batch = encode_batch([(b"a", b"1", [("h", b"x")]), (None, b"2", ()), (b"c", None, ())], base_offset=40,
                         compression=codec)
    assert decode_keys(batch) == [(40, b"a", False), (41, None, False), (42, b"c", True)]


def test_decoded_records_are_the_same_values_as_constructed_ones():
    """Decoding fills Records through make_record (slots set directly): equal, hashable, frozen, alike."""
    import dataclasses

    from groupcoord.protocol.record_batch import Record, make_record

    made, built = make_record(5, 7, b"k", None, (("h", b"v"),)), Record(5, 7, b"k", None, (("h", b"v"),))
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.offset = 6  # type: ignore[misc]


@given(st.integers(0, 100), st.integers(-5, 100), st.none() | st.binary(max_size=80), st.none() | st.binary(max_size=80),
       st.lists(st.tuples(st.text(max_size=3), st.none() | st.binary(max_size=3)), max_size=2))
def test_small_record_layout_is_the_general_one(offset_delta, timestamp_delta, key, value, headers) -> None:
    from groupcoord.protocol.record_batch import _encode_record, _encode_record_general

    assert _encode_record(offset_delta, timestamp_delta, key, value, headers) == \
        _encode_record_general(offset_delta, timestamp_delta, key, value, headers)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(record_strategy, min_size=1, max_size=300), st.sampled_from([CompressionType.NONE, CompressionType.LZ4]),
       st.integers(min_value=0, max_value=2**40), st.integers(min_value=0, max_value=2**20))
def test_key_value_decoding_agrees_with_full_decoding(records, codec, base_offset, base_timestamp):
    """decode_key_values (the coordinator's replay) reads what decode_records reads: up to 300 records, so
    offset deltas of one, two and three varint bytes, with null keys, values and header values."""
    from groupcoord.protocol.record_batch import decode_key_values

    batch = encode_batch(records, compression=codec, base_offset=base_offset, base_timestamp=base_timestamp)
    assert list(decode_key_values(batch)) == [(r.offset, r.key, r.value) for r in decode_records(batch)]


@pytest.mark.parametrize("damage", ["longer record", "longer value", "trailing byte"])
def test_key_value_decoding_refuses_what_full_decoding_refuses(damage):
    from groupcoord.protocol.record_batch import decode_key_values

    batch = bytearray(encode_batch([(b"abc", b"1", [("h", b"v")]), (b"d", b"2", ())], base_timestamp=0))
    if damage == "longer record":
        batch[HEADER_SIZE] += 2
    elif damage == "longer value":
        batch[batch.index(b"abc") + 3] = 0x04  # value length 2 instead of 1: the fields no longer add up
    else:
        batch += b"\x00"
        batch[8:12] = (len(batch) - 12).to_bytes(4, "big")
    with pytest.raises(CorruptBatchError):
        decode_records(bytes(batch))
    with pytest.raises(CorruptBatchError):
        list(decode_key_values(bytes(batch)))


coordinator_record = st.tuples(st.binary(max_size=70), st.none() | st.binary(max_size=70), st.just(()))
large_record = st.tuples(st.binary(max_size=70), st.binary(min_size=60, max_size=4200), st.just(()))
"""Values either side of 4,096 bytes too (the varint table's end: a record that long goes to encode_batch)."""


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.one_of(st.lists(coordinator_record, min_size=1, max_size=300), st.lists(record_strategy, min_size=1, max_size=8),
                 st.lists(st.one_of(coordinator_record, large_record), min_size=1, max_size=8)),
       st.integers(min_value=0, max_value=2**42), st.sampled_from([CompressionType.NONE, CompressionType.LZ4]))
def test_the_coordinators_batch_writer_is_encode_batch_byte_for_byte(records, timestamp, codec):
    """encode_plain_batch (the coordinator runtime's appends) lays small records out from tables and falls back
    to encode_batch for anything else: keys and values either side of 64 bytes (the one-byte varint limit) and
    of 4,096 (the table's), tombstones, headers, null keys, offset deltas past 63, compression; every batch equals encode_batch's."""
    from groupcoord.protocol.record_batch import encode_plain_batch

    assert encode_plain_batch(records, timestamp, compression=codec) == \
        encode_batch(records, base_timestamp=timestamp, compression=codec)


@pytest.mark.parametrize("value_len", [63, 64, 300, 4088, 4089, 4095, 4096, 5000])
def test_the_coordinators_batch_writer_at_the_tables_edges(value_len):
    """A record whose value, or whose whole length, needs a varint past the table's 4,096 goes to encode_batch;
    below that it is laid out from the table; the same batch either way, with a small record either side."""
    from groupcoord.protocol.record_batch import encode_plain_batch

    records = [(b"k", b"v", ()), (b"", bytes(range(256)) * (value_len // 256) + bytes(value_len % 256), ()),
               (b"\x00\x02group", b"x" * 10, ())]
    batch = encode_plain_batch(records, 1_700_000_000_000)
    assert batch == encode_batch(records, base_timestamp=1_700_000_000_000)
    assert [(r.key, r.value) for r in decode_records(batch)] == [(k, v) for k, v, _ in records]


def test_the_coordinators_batch_writer_takes_a_loop_turn_of_offset_commits():
    """The lane's case itself: hundreds of offset-commit records (36-byte keys, 24-byte values), decoded back."""
    from groupcoord.protocol.record_batch import encode_plain_batch

    records = [(b"\x00\x01" + b"g" * 34, b"\x00\x03" + bytes(22), ()) for _ in range(500)]
    batch = encode_plain_batch(records, 1_700_000_000_000)
    assert batch == encode_batch(records, base_timestamp=1_700_000_000_000)
    assert verify_crc(batch)
    assert [(r.offset, r.key, r.value) for r in decode_records(batch)] == [(i, k, v) for i, (k, v, _) in enumerate(records)]


def test_the_small_varint_table_is_each_numbers_varint():
    """varint.py builds its table of 0..4095's zig-zag varints by layout (cheaper at import); it must equal
    encode_varint's."""
    from groupcoord.protocol.varint import SMALL_VARINTS, encode_varint

    assert list(SMALL_VARINTS) == [encode_varint(n) for n in range(4096)]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(coordinator_record, min_size=1, max_size=150),
       st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=3),
       st.integers(min_value=0, max_value=2**40))
def test_key_value_decoding_of_damaged_batches_agrees_with_full_decoding(records, damage, base_offset):
    """Bytes of the records section overwritten (lengths, deltas, varints cut or made negative, header counts):
    decode_key_values refuses what decode_records refuses, and reads what it reads otherwise."""
    from groupcoord.protocol.record_batch import decode_key_values

    batch = bytearray(encode_batch(records, base_offset=base_offset, base_timestamp=0))
    for where, byte in damage:
        batch[HEADER_SIZE + where % (len(batch) - HEADER_SIZE)] = byte
    batch = bytes(batch)
    try:
        expected = [(r.offset, r.key, r.value) for r in decode_records(batch)]
    except CorruptBatchError:
        with pytest.raises(CorruptBatchError):
            list(decode_key_values(batch))
    else:
        assert list(decode_key_values(batch)) == expected
