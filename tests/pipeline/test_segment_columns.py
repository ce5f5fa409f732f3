"""The vectorised reader gives, row for row and in log order, what the row-at-a-time reference reader gives.

Offset commits take the columnar fast path; everything else (group metadata, KIP-848 records, tombstones,
markers, compressed batches, headers, values it refuses, damage) is handed back to the reference reader.
Both readers see the same segments here, from single odd records up to random mixes of every kind of
record, batch and damage, cut into output batches of random sizes.
"""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
from groupcoord.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.record_batch import ATTRIBUTES_OFFSET, CRC_OFFSET, encode_batch

from groupcoord.pipeline.schema import ARROW_SCHEMA
from groupcoord.pipeline.segment_columns import SegmentColumnsDecoder
from groupcoord.pipeline.segment_reader import read_segment, read_segment_rows

T0 = 1_700_000_000_000


def _commit(group: str, topic: str, partition: int, offset: int, metadata: str = "", epoch: int = 5,
            expire: int | None = None) -> tuple[bytes, bytes, tuple]:
    return (encode_key(OffsetCommitKey(group, topic, partition)),
            encode_value(OffsetCommitValue(offset, epoch, metadata, T0 + offset, expire)), ())


def _raw_value(version: int, offset: int, metadata: bytes, *, epoch: int = 3, commit: int = T0,
               expire: int = -1, trailing: bytes = b"", mlen: int | None = None) -> bytes:
    """An OffsetCommitValue of any version, byte by byte (also wrong ones)."""
    mlen = len(metadata) if mlen is None else mlen
    out = struct.pack(">hq", version, offset)
    if version >= 3:
        out += struct.pack(">i", epoch)
    out += struct.pack(">h", mlen) + metadata + struct.pack(">q", commit)
    if version == 1:
        out += struct.pack(">q", expire)
    return out + trailing


def _group_metadata(group: str, generation: int) -> tuple[bytes, bytes, tuple]:
    member = MemberMetadata(f"{group}-m1", None, "client", "/10.0.0.1", 45_000, 300_000,
                            encode_subscription(Subscription(("orders",))),
                            encode_assignment(Assignment((("orders", (0, 1)),))))
    value = GroupMetadataValue("consumer", generation, "range", f"{group}-m1", T0, (member,))
    return encode_key(GroupMetadataKey(group)), encode_value(value), ()


KEY = encode_key(OffsetCommitKey("g", "orders", 0))
ODD_RECORDS = {
    "commit": _commit("g", "orders", 0, 42, "meta"),
    "v0": (KEY, _raw_value(0, 7, b"zero"), ()),
    "v1 with expire": (KEY, _raw_value(1, 8, b"one", expire=T0 + 5), ()),
    "v1 without expire": (KEY, _raw_value(1, 9, b"", expire=-1), ()),
    "v2": (KEY, _raw_value(2, 10, b"two"), ()),
    "v3 trailing bytes": (KEY, _raw_value(3, 11, b"x", trailing=b"\x00\x07"), ()),
    "v4 (flexible)": (KEY, b"\x00\x04" + b"\x00" * 20, ()),
    "negative metadata length": (KEY, _raw_value(3, 12, b"", mlen=-1), ()),
    "overlong metadata length": (KEY, _raw_value(3, 13, b"ab", mlen=400), ()),
    "metadata not utf-8": (KEY, _raw_value(3, 14, b"\xff\xfe"), ()),
    "unicode metadata": (KEY, _raw_value(3, 15, "zürich-ø-東京".encode()), ()),
    "empty value": (KEY, b"", ()),
    "one-byte value": (KEY, b"\x00", ()),
    "tombstone": (KEY, None, ()),
    "null key": (None, b"value", ()),
    "unknown type": (struct.pack(">h", 99) + b"future", b"whatever", ()),
    "truncated key": (KEY[:5], b"v", ()),
    "group metadata": _group_metadata("g", 4),
    "group tombstone": (encode_key(GroupMetadataKey("g")), None, ()),
    "kip-848 group": (encode_key(ConsumerGroupMetadataKey("new")), encode_value(ConsumerGroupMetadataValue(epoch=3)),
                      ()),
    "kip-848 member": (encode_key(ConsumerGroupMemberMetadataKey("new", "m")),
                       encode_value(ConsumerGroupMemberMetadataValue("i", None, "c", "/h", ("orders",))), ()),
    "headers": (KEY, _raw_value(3, 16, b"h"), (("trace", b"1"),)),
}


def _both(segment: bytes, batch_rows: int = 16_384, verify: bool = True) -> tuple[pa.Table, pa.Table]:
    fast = SegmentColumnsDecoder(4, "00000000000000000000.log").batches(segment, verify=verify, batch_rows=batch_rows)
    return _table(fast), _reference(segment, batch_rows, verify)


def _table(batches) -> pa.Table:
    return pa.Table.from_batches(list(batches), schema=ARROW_SCHEMA)


def _reference(segment: bytes, batch_rows: int, verify: bool) -> pa.Table:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "__consumer_offsets-4" / "00000000000000000000.log"
        path.parent.mkdir()
        path.write_bytes(segment)
        return _table(read_segment_rows(path, 4, verify=verify, batch_rows=batch_rows))


def _assert_same(segment: bytes, batch_rows: int = 16_384, verify: bool = True) -> pa.Table:
    fast, reference = _both(segment, batch_rows, verify)
    assert fast.num_rows == reference.num_rows
    assert fast.to_pylist() == reference.to_pylist()
    return fast


@pytest.mark.parametrize("name", sorted(ODD_RECORDS))
def test_each_odd_record_between_two_plain_commits_reads_as_the_reference_reads_it(name):
    batch = encode_batch([_commit("g", "orders", 1, 1), ODD_RECORDS[name], _commit("g", "orders", 2, 2)],
                         base_offset=100, base_timestamp=T0)
    rows = _assert_same(batch).to_pylist()
    assert [r["log_offset"] for r in rows] == [100, 101, 102]
    assert rows[0]["kind"] == rows[2]["kind"] == "offset_commit"


def test_the_fast_path_reads_every_column_of_a_commit():
    (row,) = _assert_same(encode_batch([_commit("billing", "invoices", 3, 1234, "host-1", epoch=9)],
                                       base_offset=77, base_timestamp=T0, producer_id=5)).to_pylist()
    assert row == {**{name: None for name in ARROW_SCHEMA.names}, "offsets_partition": 4,
                   "segment": "00000000000000000000.log", "batch_position": 0, "log_offset": 77, "timestamp": T0,
                   "batch_timestamp": T0, "kind": "offset_commit", "producer_id": 5, "is_transactional": False,
                   "record_bytes": len(_commit("billing", "invoices", 3, 1234, "host-1", epoch=9)[0])
                   + len(_commit("billing", "invoices", 3, 1234, "host-1", epoch=9)[1]),
                   "group": "billing", "topic": "invoices", "partition": 3, "committed_offset": 1234,
                   "leader_epoch": 9, "metadata": "host-1", "commit_timestamp": T0 + 1234}


def _flip_crc_covered_byte(batch: bytes) -> bytes:
    damaged = bytearray(batch)
    damaged[-3] ^= 0xFF
    return bytes(damaged)


def _mangle_keeping_crc(batch: bytes) -> bytes:
    """A record length that runs past the batch, with a CRC that matches: only the walk can notice."""
    damaged = bytearray(batch)
    damaged[61] = 0x7E  # the first record's length varint: 63
    damaged[CRC_OFFSET:CRC_OFFSET + 4] = crc32c(bytes(damaged[ATTRIBUTES_OFFSET:])).to_bytes(4, "big")
    return bytes(damaged)


def _records_strategy():
    names = sorted(ODD_RECORDS)
    commit = st.builds(lambda g, p, o, m: _commit(f"group-{g}", f"topic-{g % 3}", p, o, m),
                       st.integers(0, 6), st.integers(0, 3), st.integers(0, 2**40), st.sampled_from(["", "m", "møø"]))
    odd = st.sampled_from(names).map(ODD_RECORDS.__getitem__)
    return st.lists(st.one_of(commit, commit, commit, odd), min_size=1, max_size=12)


_BATCH = st.fixed_dictionaries({
    "records": _records_strategy(),
    "compression": st.sampled_from([0, 0, 0, 1, 4]),
    "timestamp_type": st.sampled_from([0, 0, 1]),
    "transactional": st.booleans(),
    "control": st.sampled_from([False] * 6 + [True]),
    "damage": st.sampled_from([None] * 8 + ["crc", "walk"]),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(_BATCH, min_size=1, max_size=25), batch_rows=st.sampled_from([1, 3, 7, 64, 16_384]),
       tail=st.sampled_from([b"", b"", b"\x00" * 30, b"\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x01\x00\x02"]),
       verify=st.sampled_from([True, True, False]))
def test_random_logs_read_the_same_through_both_readers(batches, batch_rows, tail, verify):
    segment, offset = bytearray(), 0
    for spec in batches:
        records = spec["records"]
        if spec["control"]:
            records = [(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 3), ())]
        batch = encode_batch(records, base_offset=offset, base_timestamp=T0 + offset,
                             compression=spec["compression"], timestamp_type=spec["timestamp_type"],
                             max_timestamp=T0 + offset + 99, producer_id=7 if spec["transactional"] else -1,
                             producer_epoch=0 if spec["transactional"] else -1,
                             is_transactional=spec["transactional"] or spec["control"], is_control=spec["control"])
        if spec["damage"] == "crc":
            batch = _flip_crc_covered_byte(batch)
        elif spec["damage"] == "walk" and spec["compression"] == 0:
            batch = _mangle_keeping_crc(batch)
        segment += batch
        offset += len(records)
    _assert_same(bytes(segment) + tail, batch_rows, verify)


def test_read_segment_is_the_fast_reader_over_the_file(tmp_path):
    segment = encode_batch([_commit("g", "t", p, p) for p in range(5)] + [_group_metadata("g", 1)], base_timestamp=T0)
    path = tmp_path / "__consumer_offsets-4" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(segment)
    assert _table(read_segment(path, 4)).to_pylist() == _reference(segment, 16_384, True).to_pylist()
