"""A damaged segment is walked to its end: bad batches and torn tails are reported, good batches still read."""

from groupcoord.protocol.record_batch import encode_batch

from groupcoord.pipeline.schema import RecordKind
from groupcoord.pipeline.segment_scan import Damage, GoodBatch, scan_batches


def _segment(batches: int = 4, records_per_batch: int = 3) -> tuple[bytes, list[int]]:
    data, positions = bytearray(), []
    for b in range(batches):
        positions.append(len(data))
        records = [(f"k{b}-{r}".encode(), f"value-{b}-{r}".encode(), ()) for r in range(records_per_batch)]
        data += encode_batch(records, base_offset=b * records_per_batch, base_timestamp=1_000 + b)
    return bytes(data), positions


def _summary(items):
    return [(type(i).__name__, i.position, getattr(i, "kind", None)) for i in items]


def test_an_intact_segment_yields_every_batch_and_every_record():
    data, positions = _segment()
    items = list(scan_batches(data))
    assert all(isinstance(i, GoodBatch) for i in items)
    assert [i.position for i in items] == positions
    assert [r.offset for i in items for r in i.records] == list(range(12))


def test_a_batch_failing_its_crc_is_reported_and_the_walk_continues_after_it():
    data, positions = _segment()
    damaged = bytearray(data)
    damaged[positions[1] + 70] ^= 0xFF  # inside batch 1's records
    items = list(scan_batches(bytes(damaged)))
    assert _summary(items) == [
        ("GoodBatch", positions[0], None),
        ("Damage", positions[1], RecordKind.CORRUPT),
        ("GoodBatch", positions[2], None),
        ("GoodBatch", positions[3], None),
    ]
    assert items[1].records_claimed == 3 and "CRC" in items[1].error


def test_without_crc_checks_a_flipped_value_byte_surfaces_as_changed_data_not_as_damage():
    data, positions = _segment()
    damaged = bytearray(data)
    damaged[positions[2] - 2] ^= 0x01  # the last value byte of batch 1 (the record ends with its header count)
    items = list(scan_batches(bytes(damaged), verify=False))
    assert not any(isinstance(i, Damage) for i in items)
    assert items[1].records[-1].value == b"value-1-3"
    assert isinstance(list(scan_batches(bytes(damaged)))[1], Damage)


def test_a_torn_tail_ends_the_walk_with_a_report_of_the_missing_bytes():
    data, positions = _segment()
    items = list(scan_batches(data[:-10]))
    assert _summary(items)[-1] == ("Damage", positions[3], RecordKind.TORN_TAIL)
    assert sum(len(i.records) for i in items if isinstance(i, GoodBatch)) == 9
    assert "needs" in items[-1].error


def test_a_zero_filled_tail_from_preallocation_is_reported_as_a_torn_tail():
    data, positions = _segment(batches=2)
    items = list(scan_batches(data + bytes(100)))
    assert items[-1].kind is RecordKind.TORN_TAIL and "zero-filled" in items[-1].error
    assert items[-1].bytes_affected == 100


def test_a_legacy_magic_batch_is_corrupt_for_this_reader_but_does_not_hide_the_next_one():
    data, positions = _segment(batches=3)
    damaged = bytearray(data)
    damaged[positions[1] + 16] = 1
    kinds = [getattr(i, "kind", "good") for i in scan_batches(bytes(damaged))]
    assert kinds == ["good", RecordKind.CORRUPT, "good"]


def test_an_impossible_length_stops_the_walk_with_a_corrupt_report():
    data, positions = _segment(batches=3)
    damaged = bytearray(data)
    damaged[positions[1] + 8 : positions[1] + 12] = (5).to_bytes(4, "big")
    items = list(scan_batches(bytes(damaged)))
    assert _summary(items) == [("GoodBatch", 0, None), ("Damage", positions[1], RecordKind.CORRUPT)]
    assert items[-1].bytes_affected == len(data) - positions[1]
