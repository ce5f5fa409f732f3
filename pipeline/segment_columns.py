"""Decoding a segment straight into Arrow columns: the data source's fast path.

Nearly every record of a `__consumer_offsets` log is an offset commit (or its tombstone), and nearly every
commit value is OffsetCommitValue v0-v3 with fixed-width fields around one string. So the reader walks each
uncompressed batch once, keeping for a commit only what the bytes cannot give later (its offset and timestamp
deltas, an index into a table of the distinct keys, the value's position and length in the segment image), and
then reads all the values of a chunk at once with numpy (big-endian fields gathered at their positions,
metadata strings gathered into one Arrow string buffer). No Python object is built per commit: no Record, no
value, no row tuple, no per-column list of Python values for Arrow to convert.

Everything else takes the row-at-a-time reader (`pipeline.record_rows.RowDecoder`), which stays the reference
for what each row holds: group metadata, KIP-848 and share-group records, their tombstones, markers,
compressed or control batches, records with headers, values the vectorised reader does not accept (a version
it does not read, a negative or overlong metadata length, metadata that is not UTF-8), and any batch that does
not walk cleanly (the reference reader then reports it as damage with its precise error). Rows keep log order:
the chunk's fast rows and reference rows are merged back by their position in the chunk.
"""

from __future__ import annotations

import struct
from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, decode_key
from groupcoord.protocol.record_batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_MASK,
    CONTROL_BIT,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    make_record,
)
from groupcoord.protocol.varint import decode_varlong
from groupcoord.protocol.crc import crc32c

from groupcoord.pipeline.record_rows import RowDecoder
from groupcoord.pipeline.schema import ARROW_SCHEMA, RecordKind
from groupcoord.pipeline.segment_scan import Damage, check_batch, frame_batches

_HEADER = struct.Struct(">qiibIhiqqqhii")
# what the walk needs of a batch's header: its crc (at 17), attributes (21) and record count (57); the
# per-batch columns (base offset, timestamps, producer id) are gathered from the header by numpy when the
# chunk is built, so the walk makes three ints per batch instead of thirteen
_WALK_HEADER = struct.Struct(">Ih34xi")
_WALK_HEADER_AT = 17
_BASE_OFFSET_AT, _ATTRIBUTES_AT, _BASE_TIMESTAMP_AT, _MAX_TIMESTAMP_AT, _PRODUCER_ID_AT = 0, 21, 27, 35, 43
_FIELDS = 5  # per fast row, in _Chunk.fields: offset delta, timestamp delta, key id, value position, value length
_KEY_TABLE_LIMIT = 200_000
_OFFSET_KINDS = [RecordKind.OFFSET_COMMIT.value, RecordKind.OFFSET_COMMIT_TOMBSTONE.value]


class _WalkFailed(Exception):
    """The batch's records do not walk cleanly: the reference reader decides what it is."""


def rows_to_batch(rows: list[tuple]) -> pa.RecordBatch:
    """Row tuples (the reference reader's) as one Arrow batch."""
    columns = list(zip(*rows))
    arrays = [pa.array(column, type=field.type) for column, field in zip(columns, ARROW_SCHEMA)]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


def _gather(u8: np.ndarray, positions: np.ndarray, width: int) -> np.ndarray:
    """`width` bytes at each position, as an (n, width) array (positions must be in bounds)."""
    return u8[positions[:, None] + np.arange(width)]


def _be(u8: np.ndarray, positions: np.ndarray, dtype: str) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    return _gather(u8, positions, width).view(dtype).reshape(-1).astype(dtype[1:])


class _KeyTable:
    """Each distinct offset-commit key once: its group, topic, partition and length (keys repeat endlessly)."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.groups: list[str] = []
        self.topics: list[str] = []
        self.partitions: list[int] = []
        self.lengths: list[int] = []
        self._arrays: tuple | None = None

    def add(self, key: bytes) -> int:
        """The key's index, or -1 when it is not an offset-commit key the fast path reads."""
        try:
            decoded = decode_key(key)
        except Exception:  # the reference reader reports it as malformed
            decoded = None
        if type(decoded) is not OffsetCommitKey:
            index = -1
        else:
            index = len(self.groups)
            self.groups.append(decoded.group)
            self.topics.append(decoded.topic)
            self.partitions.append(decoded.partition)
            self.lengths.append(len(key))
            self._arrays = None
        self.ids[key] = index
        return index

    def arrays(self) -> tuple[pa.Array, pa.Array, pa.Array, np.ndarray]:
        if self._arrays is None:
            self._arrays = (pa.array(self.groups, pa.string()), pa.array(self.topics, pa.string()),
                            pa.array(self.partitions, pa.int32()), np.array(self.lengths, np.int64))
        return self._arrays

    def full(self) -> bool:
        return len(self.ids) >= _KEY_TABLE_LIMIT


class _Chunk:
    """The rows of one output batch while they are gathered."""

    def __init__(self) -> None:
        # per batch that has fast rows: where its header is, how many fast rows it gave
        self.batch_positions: list[int] = []
        self.batch_counts: list[int] = []
        # per fast row, _FIELDS ints flat (one `extend` per row instead of five appends)
        self.fields: list[int] = []
        # reference rows: (position in the chunk, row tuple)
        self.slow: list[tuple[int, tuple]] = []

    def fast_rows(self) -> int:
        return len(self.fields) // _FIELDS

    def rows(self) -> int:
        return len(self.fields) // _FIELDS + len(self.slow)

    def add_slow(self, rows: list[tuple]) -> None:
        start = self.rows()
        self.slow.extend(zip(range(start, start + len(rows)), rows))

    def columns(self) -> np.ndarray:
        """The fast rows' fields as an (n, _FIELDS) int64 array."""
        return np.array(self.fields, np.int64).reshape(-1, _FIELDS)


class SegmentColumnsDecoder:
    """Decodes one segment image into Arrow record batches of ARROW_SCHEMA, row for row what `RowDecoder`
    gives, in log order."""

    def __init__(self, offsets_partition: int, segment_name: str) -> None:
        self.offsets_partition = offsets_partition
        self.segment_name = segment_name
        self.rows = RowDecoder(offsets_partition, segment_name)
        self.keys = _KeyTable()

    def batches(self, buf: bytes, *, verify: bool = True, batch_rows: int = 16_384) -> Iterator[pa.RecordBatch]:
        u8 = np.frombuffer(buf, np.uint8)
        chunk = _Chunk()
        limit = batch_rows * _FIELDS
        for position, size, damage in frame_batches(buf):
            if damage is not None:
                chunk.add_slow([self.rows.damage_row(damage)])
            else:
                self._batch(buf, position, size, verify, chunk)
            if len(chunk.fields) + _FIELDS * len(chunk.slow) >= limit:  # chunk.rows() >= batch_rows, inline
                yield self._build(u8, buf, chunk)
                chunk = _Chunk()
                if self.keys.full():
                    self.keys = _KeyTable()
        if chunk.rows():
            yield self._build(u8, buf, chunk)

    # ---- the walk -------------------------------------------------------------------------------

    def _reference(self, buf: bytes, position: int, size: int, verify: bool, chunk: _Chunk) -> None:
        item = check_batch(buf, position, size, verify)
        if isinstance(item, Damage):
            chunk.add_slow([self.rows.damage_row(item)])
        else:
            chunk.add_slow(self.rows.batch_rows(item))

    def _batch(self, buf: bytes, position: int, size: int, verify: bool, chunk: _Chunk) -> None:
        if buf[position + MAGIC_OFFSET] != MAGIC:
            return self._reference(buf, position, size, verify, chunk)
        crc, attributes, count = _WALK_HEADER.unpack_from(buf, position + _WALK_HEADER_AT)
        if attributes & (COMPRESSION_MASK | CONTROL_BIT):
            return self._reference(buf, position, size, verify, chunk)
        end = position + size
        if verify and crc != crc32c(memoryview(buf)[position + ATTRIBUTES_OFFSET:end]):
            return self._reference(buf, position, size, verify, chunk)
        fields_before, slow_before = len(chunk.fields), len(chunk.slow)
        try:
            self._records(buf, position, end, count, chunk)
        except (_WalkFailed, IndexError, ValueError):
            del chunk.fields[fields_before:]
            del chunk.slow[slow_before:]
            return self._reference(buf, position, size, verify, chunk)
        fast = (len(chunk.fields) - fields_before) // _FIELDS
        if fast:
            chunk.batch_positions.append(position)
            chunk.batch_counts.append(fast)

    def _records(self, b: bytes, position: int, end: int, count: int, chunk: _Chunk) -> None:
        """The record walk of `protocol.record_batch._decode_record_list`, over the segment image in place."""
        key_ids = self.keys.ids
        add_key = self.keys.add
        fields = chunk.fields.extend
        varint = decode_varlong
        slow: list[tuple[int, int, int, bytes | None, bytes | None]] = []
        i = position + HEADER_SIZE
        if end - i < 0 or count < 0:
            raise _WalkFailed
        for _ in range(count):
            x = b[i]
            if x < 0x80:
                length = (x >> 1) ^ -(x & 1); i += 1
            elif b[i + 1] < 0x80:
                length = (x & 0x7F) | (b[i + 1] << 7); length = (length >> 1) ^ -(length & 1); i += 2
            else:
                length, i = varint(b, i)
            record_end = i + length
            if length < 0 or record_end > end:
                raise _WalkFailed
            i += 1  # attributes
            x = b[i]
            if x < 0x80:
                ts_delta = (x >> 1) ^ -(x & 1); i += 1
            else:
                ts_delta, i = varint(b, i)
            x = b[i]
            if x < 0x80:
                offset_delta = (x >> 1) ^ -(x & 1); i += 1
            else:
                offset_delta, i = varint(b, i)
            x = b[i]
            if x < 0x80:
                key_len = (x >> 1) ^ -(x & 1); i += 1
            else:
                key_len, i = varint(b, i)
            if key_len < 0:
                key, kid = None, -1
            else:
                key = b[i:i + key_len]; i += key_len
                kid = key_ids.get(key)
                if kid is None:
                    kid = add_key(key)
            x = b[i]
            if x < 0x80:
                value_len = (x >> 1) ^ -(x & 1); i += 1
            else:
                value_len, i = varint(b, i)
            value_pos = i
            if value_len > 0:
                i += value_len
            # no headers (never written to the offsets topic; the reference reader reads them), then the end
            if b[i] != 0 or i + 1 != record_end:
                raise _WalkFailed
            i = record_end
            if kid >= 0:
                fields((offset_delta, ts_delta, kid, value_pos, value_len))
            else:
                value = None if value_len < 0 else b[value_pos:value_pos + value_len]
                slow.append((chunk.rows() + len(slow), offset_delta, ts_delta, key, value))
        if i != end:
            raise _WalkFailed
        if slow:
            (base_offset, _, _, _, _, attributes, _, base_timestamp, max_timestamp, producer_id, _, _,
             _) = _HEADER.unpack_from(b, position)
            context = (self.offsets_partition, self.segment_name, position)
            append_time = max_timestamp if attributes & TIMESTAMP_TYPE_BIT else None
            transactional = bool(attributes & TRANSACTIONAL_BIT)
            for seq, offset_delta, ts_delta, key, value in slow:
                record = make_record(base_offset + offset_delta, base_timestamp + ts_delta, key, value, ())
                row = self.rows.record_row(context, record, append_time, max_timestamp, producer_id, transactional)
                chunk.slow.append((seq, row))

    # ---- the columns ----------------------------------------------------------------------------

    def _build(self, u8: np.ndarray, buf: bytes, chunk: _Chunk) -> pa.RecordBatch:
        fast = None
        if chunk.fields:
            rows = chunk.columns()
            values = _commit_values(u8, rows[:, 3], rows[:, 4])
            if not values[0].all():
                chunk = self._demote(buf, chunk, rows, values[0])
                values = None
                if chunk.fields:
                    rows = chunk.columns()
                    values = _commit_values(u8, rows[:, 3], rows[:, 4])
            if values is not None:
                fast = self._fast_columns(u8, chunk, rows, values)
        if not chunk.slow:
            return fast
        slow = rows_to_batch([row for _, row in chunk.slow])
        if fast is None:
            return slow
        # merge back into log order: the reference rows' positions are known, the fast rows fill the rest
        total = fast.num_rows + slow.num_rows
        slow_at = np.fromiter((seq for seq, _ in chunk.slow), np.int64, len(chunk.slow))
        is_fast = np.ones(total, bool)
        is_fast[slow_at] = False
        order = np.empty(total, np.int64)
        order[is_fast] = np.arange(fast.num_rows)
        order[slow_at] = fast.num_rows + np.arange(slow.num_rows)
        return pa.Table.from_batches([fast, slow]).take(pa.array(order)).combine_chunks().to_batches()[0]

    def _fast_columns(self, u8: np.ndarray, chunk: _Chunk, rows: np.ndarray, values: tuple) -> pa.RecordBatch:
        _, offset, epoch, metadata, commit, expire = values
        offset_deltas, timestamp_deltas, kid, value_lengths = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 4]
        tombstone = value_lengths < 0
        n = len(rows)
        counts = np.array(chunk.batch_counts, np.int64)
        positions = np.array(chunk.batch_positions, np.int64)

        def header(at: int, dtype: str) -> np.ndarray:
            """One field of every batch's header, repeated for each of its fast rows."""
            return np.repeat(_be(u8, positions + at, dtype), counts)

        attributes = header(_ATTRIBUTES_AT, ">i2")
        append_time = (attributes & TIMESTAMP_TYPE_BIT) != 0
        max_timestamps = header(_MAX_TIMESTAMP_AT, ">i8")
        timestamps = np.where(append_time, max_timestamps, header(_BASE_TIMESTAMP_AT, ">i8") + timestamp_deltas)
        groups, topics, partitions, key_lengths = self.keys.arrays()
        take = pa.array(kid)
        zeros = pa.array(np.zeros(n, np.int64))
        columns = {
            "offsets_partition": pa.array(np.full(n, self.offsets_partition, np.int32)),
            "segment": pa.array([self.segment_name], pa.string()).take(zeros),
            "batch_position": pa.array(np.repeat(positions, counts)),
            "log_offset": pa.array(header(_BASE_OFFSET_AT, ">i8") + offset_deltas),
            "timestamp": pa.array(timestamps),
            "batch_timestamp": pa.array(max_timestamps),
            "kind": pa.array(_OFFSET_KINDS, pa.string()).take(pa.array(tombstone.astype(np.int64))),
            "producer_id": pa.array(header(_PRODUCER_ID_AT, ">i8")),
            "is_transactional": pa.array((attributes & TRANSACTIONAL_BIT) != 0),
            "record_bytes": pa.array((key_lengths[kid] + np.maximum(value_lengths, 0)).astype(np.int32)),
            "group": groups.take(take),
            "topic": topics.take(take),
            "partition": partitions.take(take),
            "committed_offset": pa.array(offset, mask=tombstone),
            "leader_epoch": pa.array(epoch, mask=tombstone),
            "metadata": metadata,
            "commit_timestamp": pa.array(commit, mask=tombstone),
            "expire_timestamp": expire,
        }
        arrays = [columns[name] if name in columns else pa.nulls(n, type_)
                  for name, type_ in zip(ARROW_SCHEMA.names, ARROW_SCHEMA.types)]
        return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)

    def _demote(self, buf: bytes, chunk: _Chunk, rows: np.ndarray, ok: np.ndarray) -> _Chunk:
        """The chunk again, with the commits whose values the vectorised reader refused moved to the reference
        reader at their place in log order."""
        counts = chunk.batch_counts
        batch_of = np.repeat(np.arange(len(counts)), counts)
        is_fast = np.ones(chunk.rows(), bool)
        is_fast[[seq for seq, _ in chunk.slow]] = False
        fast_seq = np.flatnonzero(is_fast)
        key_bytes = {index: key for key, index in self.keys.ids.items() if index >= 0}
        rebuilt = _Chunk()
        rebuilt.slow = list(chunk.slow)
        kept = [0] * len(counts)
        for row, (offset_delta, ts_delta, kid, start, length) in enumerate(rows.tolist()):
            b = int(batch_of[row])
            if ok[row]:
                rebuilt.fields.extend((offset_delta, ts_delta, kid, start, length))
                kept[b] += 1
                continue
            position = chunk.batch_positions[b]
            (base_offset, _, _, _, _, attributes, _, base_timestamp, max_timestamp, producer_id, _, _,
             _) = _HEADER.unpack_from(buf, position)
            record = make_record(base_offset + offset_delta, base_timestamp + ts_delta, key_bytes[kid],
                                 None if length < 0 else buf[start:start + length], ())
            rebuilt.slow.append((int(fast_seq[row]), self.rows.record_row(
                (self.offsets_partition, self.segment_name, position), record,
                max_timestamp if attributes & TIMESTAMP_TYPE_BIT else None, max_timestamp, producer_id,
                bool(attributes & TRANSACTIONAL_BIT))))
        rebuilt.batch_positions = [p for p, k in zip(chunk.batch_positions, kept) if k]
        rebuilt.batch_counts = [k for k in kept if k]
        rebuilt.slow.sort(key=lambda item: item[0])
        return rebuilt


def _commit_values(u8: np.ndarray, vpos: np.ndarray, vlen: np.ndarray):
    """OffsetCommitValue v0-v3 read at every position at once, as `offsets_records.offset_value_fields` reads
    one: (accepted mask, offset, leader epoch, metadata, commit timestamp, expire timestamp); a negative length
    is a tombstone (accepted, its value columns null). A value is
    accepted when its version is 0-3, its metadata length is not negative, the fields fit in the value and
    the metadata is UTF-8; trailing bytes are ignored, as that reader ignores them."""
    n = len(vpos)
    safe = lambda positions, fits: np.where(fits, positions, 0)  # noqa: E731  (in bounds for the gather)
    has_version = vlen >= 2
    version = np.where(has_version, _be(u8, safe(vpos, has_version), ">i2"), -1).astype(np.int64)
    header = np.where(version == 3, 16, 12)
    tail = np.where(version == 1, 16, 8)
    has_header = (version >= 0) & (version <= 3) & (vlen >= header)
    mlen = np.where(has_header, _be(u8, safe(vpos + header - 2, has_header), ">i2"), -1).astype(np.int64)
    tombstone = vlen < 0
    ok = has_header & (mlen >= 0) & (header + mlen + tail <= vlen)
    mlen = np.where(ok, mlen, 0)
    offset = _be(u8, safe(vpos + 2, ok), ">i8")
    epoch = np.where(version == 3, _be(u8, safe(vpos + 10, ok), ">i4"), -1).astype(np.int32)
    tail_at = safe(vpos + header + mlen, ok)
    commit = _be(u8, tail_at, ">i8")
    expire_raw = _be(u8, safe(tail_at + 8, ok & (version == 1)), ">i8")
    expire = pa.array(expire_raw, mask=(version != 1) | (expire_raw == -1) | tombstone)
    ends = np.zeros(n + 1, np.int64)
    np.cumsum(mlen, out=ends[1:])
    total = int(ends[-1])
    if total:
        starts = vpos + header
        index = np.repeat(starts - ends[:-1], mlen) + np.arange(total)
        data = u8[index].tobytes()
    else:
        data = b""
    if ends[-1] > 2**31 - 1:
        raise ValueError("metadata larger than an Arrow string array holds")
    validity = pa.array(~tombstone).buffers()[1] if tombstone.any() else None
    metadata = pa.StringArray.from_buffers(n, pa.py_buffer(ends.astype(np.int32).tobytes()), pa.py_buffer(data),
                                           validity, int(tombstone.sum()))
    try:
        metadata.validate(full=True)
    except pa.ArrowInvalid:  # not UTF-8 somewhere: find which, those take the reference reader
        for row in np.flatnonzero(ok):
            try:
                bytes(data[ends[row]:ends[row + 1]]).decode()
            except UnicodeDecodeError:
                ok[row] = False
    return ok | tombstone, offset, epoch, metadata, commit, expire
