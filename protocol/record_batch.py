"""Record batch v2 ("magic 2"): the unit of data on the wire and on disk.

The same bytes travel in Produce/Fetch and sit in ``.log`` segments, so this codec is on
the hot path of validation, fetch and replay. Decoding therefore works on a buffer plus
a position (``struct.unpack_from``) rather than slicing, and the record loop reads
one-byte varints (and two-byte record lengths) inline, calling ``varint.py`` for the rest.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from groupcoord.protocol.compression import (DEFAULT_MAX_DECOMPRESSED, CompressionError, CompressionType, compress,
                                            decompress)
from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.varint import SMALL_VARINTS, decode_varlong, encode_varint, encode_varlong

HEADER_SIZE: Final = 61
MAGIC: Final = 2
LOG_OVERHEAD: Final = 12
"""baseOffset (8) + batchLength (4): the bytes not counted by batchLength."""

PARTITION_LEADER_EPOCH_OFFSET: Final = 12
CRC_OFFSET: Final = 17
ATTRIBUTES_OFFSET: Final = 21
MAX_TIMESTAMP_OFFSET: Final = 35
MAGIC_OFFSET: Final = 16
MIN_BATCH_LENGTH: Final = HEADER_SIZE - LOG_OVERHEAD

COMPRESSION_MASK: Final = 0x07
TIMESTAMP_TYPE_BIT: Final = 0x08
TRANSACTIONAL_BIT: Final = 0x10
CONTROL_BIT: Final = 0x20
DELETE_HORIZON_BIT: Final = 0x40

NO_TIMESTAMP: Final = -1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qi")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")

Buffer = bytes | bytearray | memoryview
RecordHeaders = tuple[tuple[str, bytes | None], ...]


class CorruptBatchError(ValueError):
    """A batch is structurally invalid or fails its CRC.

    ``offset`` is the file/buffer position of the batch (or its base offset where the
    caller has no position), so storage can say exactly where a log went bad.
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at {offset})")
        self.offset = offset


@frozen_dataclass
class Record:
    """One record of a batch as read: its absolute offset and timestamp, key, value and headers."""
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: RecordHeaders = ()


def _record_maker():
    """A constructor of decoded Records that fills the slots directly. A frozen dataclass's ``__init__``
    goes through ``object.__setattr__`` once per field; decoders build one Record per record of every
    batch they read (replay, the offsets pipeline), where that was a measurable part of decoding. The
    Record is the same frozen value either way (tests/protocol/test_record_batch.py compares them)."""
    slots = Record.__dict__
    set_offset, set_timestamp, set_key, set_value, set_headers = (
        slots[name].__set__ for name in ("offset", "timestamp", "key", "value", "headers"))
    new = object.__new__

    def make(offset: int, timestamp: int, key: bytes | None, value: bytes | None, headers: RecordHeaders) -> Record:
        record = new(Record)
        set_offset(record, offset)
        set_timestamp(record, timestamp)
        set_key(record, key)
        set_value(record, value)
        set_headers(record, headers)
        return record

    return make


make_record = _record_maker()


@dataclass(slots=True)
class BatchHeader:
    """A record batch v2's 61-byte header, as read from the log or the wire."""
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & TIMESTAMP_TYPE_BIT else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_BIT)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD


def parse_header(buf: Buffer, pos: int = 0) -> BatchHeader:
    """Read the 61-byte header at ``pos`` without checking the CRC."""
    if len(buf) - pos < HEADER_SIZE:
        raise CorruptBatchError(
            f"batch header needs {HEADER_SIZE} bytes, only {max(len(buf) - pos, 0)} remain", pos)
    header = BatchHeader(*_HEADER.unpack_from(buf, pos))
    if header.magic != MAGIC:
        raise CorruptBatchError(f"unsupported record batch magic {header.magic}, expected 2", pos)
    if header.batch_length < MIN_BATCH_LENGTH:
        raise CorruptBatchError(f"batch length {header.batch_length} is below the minimum", pos)
    return header


def verify_crc(buf: Buffer, pos: int = 0) -> bool:
    """True when the stored CRC-32C matches attributes..end of the batch at ``pos``."""
    if len(buf) - pos < HEADER_SIZE:
        return False
    (_, batch_length) = _PREFIX.unpack_from(buf, pos)
    end = pos + LOG_OVERHEAD + batch_length
    if batch_length < MIN_BATCH_LENGTH or end > len(buf):
        return False
    (stored,) = _UINT32.unpack_from(buf, pos + CRC_OFFSET)
    return stored == crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET:end])


def iter_batches(buf: Buffer, pos: int = 0, *, verify: bool = True) -> Iterator[tuple[int, BatchHeader]]:
    """Walk whole batches back to back, yielding (position, header).

    Raises CorruptBatchError on a truncated batch, a wrong magic, or (with ``verify``) a
    CRC mismatch, so callers never act on half a batch.
    """
    view = memoryview(buf)
    end = len(view)
    while pos < end:
        header = parse_header(view, pos)
        batch_end = pos + LOG_OVERHEAD + header.batch_length
        if batch_end > end:
            raise CorruptBatchError(
                f"batch of {header.size} bytes is cut short at {end - pos} bytes", pos)
        if verify and header.crc != crc32c(view[pos + ATTRIBUTES_OFFSET:batch_end]):
            raise CorruptBatchError(f"CRC mismatch in batch with base offset {header.base_offset}", pos)
        yield pos, header
        pos = batch_end


def _records_section(buf: Buffer, pos: int, header: BatchHeader | None) -> tuple[int, int, int]:
    """The batch's compression codec and where its records section starts and ends in ``buf``; a batch whose
    length runs past ``buf`` is corrupt."""
    if header is None:
        header = parse_header(buf, pos)
    end = pos + LOG_OVERHEAD + header.batch_length
    if end > len(buf):
        raise CorruptBatchError("batch is cut short", pos)
    return header.attributes & COMPRESSION_MASK, pos + HEADER_SIZE, end


def batch_payload(buf: Buffer, pos: int = 0, header: BatchHeader | None = None,
                  max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """The records section of the batch, decompressed (to at most ``max_decompressed`` bytes)."""
    codec, start, end = _records_section(buf, pos, header)
    raw = memoryview(buf)[start:end]
    if codec == 0:
        return bytes(raw)
    try:
        return decompress(codec, raw, max_decompressed)
    except CompressionError as exc:
        raise CorruptBatchError(str(exc), pos) from exc


def decode_records(buf: Buffer, pos: int = 0, header: BatchHeader | None = None,
                   max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> list[Record]:
    """Decode every record of the batch at ``pos`` (decompressing if needed)."""
    if header is None:
        header = parse_header(buf, pos)
    data = batch_payload(buf, pos, header, max_decompressed)
    try:
        return _decode_record_list(data, header.records_count, header.base_offset, header.base_timestamp)
    except (IndexError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptBatchError(f"malformed records in batch with base offset {header.base_offset}: {exc}",
                                pos) from exc


def decode_key_values(buf: Buffer, pos: int = 0, header: BatchHeader | None = None,
                      max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> Iterable[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record, checked as ``decode_records`` checks them (headers are read
    and dropped), without building Records: a coordinator's replay reads nothing else, a million times. To be
    read once: a batch of runs of records of one shape each (a coordinator's own writes) is read column by column
    (``record_shapes.column_key_values``, ~10x cheaper), the rest record by record."""
    from groupcoord.protocol.record_shapes import column_key_values  # with the first replay, not at start-up

    if header is None:
        header = parse_header(buf, pos)
    data = batch_payload(buf, pos, header, max_decompressed)
    columns = column_key_values(data, header.records_count, header.base_offset)
    if columns is not None:
        return columns
    try:
        return _decode_key_value_list(data, header.records_count, header.base_offset)
    except (IndexError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptBatchError(f"malformed records in batch with base offset {header.base_offset}: {exc}",
                                pos) from exc


_ZIGZAG_BYTE: Final = tuple((x >> 1) ^ -(x & 1) for x in range(128))
"""The number a one-byte zig-zag varint stands for, by its byte (0..127): one tuple subscript, not five
operations."""
_HALF_BYTE: Final = tuple((x & 0x7F) >> 1 for x in range(256))
"""For the first byte x of a two-byte zig-zag varint whose number is not negative (x even): that number's low six
bits; the second byte y gives the rest (``half[x] | y << 6``)."""


def _decode_key_value_list(b: bytes, count: int, base_offset: int) -> list[tuple[int, bytes | None, bytes | None]]:
    """``_decode_record_list`` without the timestamp, the headers' values and the Record: the same checks.

    A replay runs this once per record of the log (a million for bench/replay_bench.py), so the common fields are
    read with as few operations as the format allows: a one-byte varint through ``_ZIGZAG_BYTE``; a two-byte one
    of a number that is not negative (the record's length past 63 bytes, the offset delta past 63 records)
    through ``_HALF_BYTE``; anything else (a negative number, three bytes or more) through ``decode_varlong``.
    tests/protocol/test_record_batch.py holds it to ``decode_records`` on valid and on damaged batches."""
    out: list[tuple[int, bytes | None, bytes | None]] = []
    append = out.append
    varlong = decode_varlong
    zigzag = _ZIGZAG_BYTE
    half = _HALF_BYTE
    i = 0
    n = len(b)
    for _ in range(count):
        x = b[i]
        if x < 0x80:
            length = zigzag[x]; i += 1
        elif not x & 1 and (y := b[i + 1]) < 0x80:
            length = half[x] | (y << 6); i += 2
        else:
            length, i = varlong(b, i)
        record_end = i + length
        if length < 0 or record_end > n:
            raise ValueError(f"record length {length} runs past the batch")
        # The record's own bytes: positions in them are small ints (under 256, which Python does not allocate),
        # where positions in the batch are new int objects at every step.
        r = b[i:record_end]
        i = record_end
        # attributes, then the timestamp delta: neither read
        if r[1] < 0x80:
            p = 2
        else:
            _, p = varlong(r, 1)
        x = r[p]
        if x < 0x80:
            offset = base_offset + zigzag[x]; p += 1
        elif not x & 1 and (y := r[p + 1]) < 0x80:
            offset = base_offset + (half[x] | (y << 6)); p += 2
        else:
            offset_delta, p = varlong(r, p)
            offset = base_offset + offset_delta
        x = r[p]
        if x < 0x80:
            key_len = zigzag[x]; p += 1
        else:
            key_len, p = varlong(r, p)
        if key_len < 0:
            key = None
        else:
            q = p + key_len; key = r[p:q]; p = q
        x = r[p]
        if x < 0x80:
            value_len = zigzag[x]; p += 1
        else:
            value_len, p = varlong(r, p)
        if value_len < 0:
            value = None
        else:
            q = p + value_len; value = r[p:q]; p = q
        if r[p] == 0:
            p += 1
        else:
            header_count, p = varlong(r, p)
            if header_count < 0:
                raise ValueError(f"negative header count {header_count}")
            for _h in range(header_count):
                hk_len, p = varlong(r, p)
                if hk_len < 0:
                    raise ValueError("record header key is null")
                r[p:p + hk_len].decode(); p += hk_len
                hv_len, p = varlong(r, p)
                if hv_len > 0:
                    p += hv_len
        if p != length:
            raise ValueError("record fields do not add up to the record length")
        append((offset, key, value))
    if i != n:
        raise ValueError(f"{n - i} bytes left over after {count} records")
    return out


def decode_keys(buf: Buffer, pos: int = 0, header: BatchHeader | None = None) -> list[tuple[int, bytes | None, bool]]:
    """(offset, key, is_tombstone) of every record, without building Records.

    The cleaner only needs keys to decide what survives, so it skips values and headers.
    """
    if header is None:
        header = parse_header(buf, pos)
    data = batch_payload(buf, pos, header)
    try:
        return _scan_keys(data, header.records_count, header.base_offset)
    except (IndexError, ValueError) as exc:
        raise CorruptBatchError(f"malformed records in batch with base offset {header.base_offset}: {exc}",
                                pos) from exc


def _scan_keys(b: bytes, count: int, base_offset: int) -> list[tuple[int, bytes | None, bool]]:
    out: list[tuple[int, bytes | None, bool]] = []
    append = out.append
    varint = decode_varlong
    i = 0
    n = len(b)
    for _ in range(count):
        length, i = varint(b, i)
        record_end = i + length
        if length < 0 or record_end > n:
            raise ValueError(f"record length {length} runs past the batch")
        i += 1  # attributes
        x = b[i]  # timestampDelta: skipped, usually one byte
        if x < 0x80:
            i += 1
        else:
            _, i = varint(b, i)
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
            key = None
        else:
            key = b[i:i + key_len]; i += key_len
        append((base_offset + offset_delta, key, b[i] == 1))  # zig-zag -1 is the single byte 0x01
        i = record_end
    if i != n:
        raise ValueError(f"{n - i} bytes left over after {count} records")
    return out


def _decode_record_list(b: bytes, count: int, base_offset: int, base_timestamp: int) -> list[Record]:
    records: list[Record] = []
    append = records.append
    i = 0
    n = len(b)
    for _ in range(count):
        # Single-byte varints (|v| < 64) are the common case: decode them inline. A record's length is
        # usually two bytes (64 B to 8 KiB), so that case is inline too (measured: 8% of decode speed).
        x = b[i]
        if x < 0x80:
            length = (x >> 1) ^ -(x & 1); i += 1
        elif b[i + 1] < 0x80:
            length = (x & 0x7F) | (b[i + 1] << 7); length = (length >> 1) ^ -(length & 1); i += 2
        else:
            length, i = decode_varlong(b, i)
        record_end = i + length
        if length < 0 or record_end > n:
            raise ValueError(f"record length {length} runs past the batch")
        i += 1  # attributes
        x = b[i]
        if x < 0x80:
            ts_delta = (x >> 1) ^ -(x & 1); i += 1
        else:
            ts_delta, i = decode_varlong(b, i)
        x = b[i]
        if x < 0x80:
            offset_delta = (x >> 1) ^ -(x & 1); i += 1
        else:
            offset_delta, i = decode_varlong(b, i)
        x = b[i]
        if x < 0x80:
            key_len = (x >> 1) ^ -(x & 1); i += 1
        else:
            key_len, i = decode_varlong(b, i)
        if key_len < 0:
            key = None
        else:
            key = b[i:i + key_len]; i += key_len
        x = b[i]
        if x < 0x80:
            value_len = (x >> 1) ^ -(x & 1); i += 1
        else:
            value_len, i = decode_varlong(b, i)
        if value_len < 0:
            value = None
        else:
            value = b[i:i + value_len]; i += value_len
        x = b[i]
        if x == 0:
            header_count = 0; i += 1
        else:
            header_count, i = decode_varlong(b, i)
        if header_count < 0:
            raise ValueError(f"negative header count {header_count}")
        if header_count:
            hdrs = []
            for _h in range(header_count):
                hk_len, i = decode_varlong(b, i)
                if hk_len < 0:
                    raise ValueError("record header key is null")
                hkey = b[i:i + hk_len].decode(); i += hk_len
                hv_len, i = decode_varlong(b, i)
                if hv_len < 0:
                    hval = None
                else:
                    hval = b[i:i + hv_len]; i += hv_len
                hdrs.append((hkey, hval))
            headers: RecordHeaders = tuple(hdrs)
        else:
            headers = ()
        if i != record_end:
            raise ValueError("record fields do not add up to the record length")
        append(make_record(base_offset + offset_delta, base_timestamp + ts_delta, key, value, headers))
    if i != n:
        raise ValueError(f"{n - i} bytes left over after {count} records")
    return records


def _encode_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out += b"\x01"  # zig-zag(-1)
    else:
        out += encode_varint(len(data))
        out += data


_ZIGZAG_SMALL = tuple(bytes((n << 1,)) for n in range(64))
"""The zig-zag varint of 0..63, each one byte: every field of a small record without headers (a coordinator's
offset commit: deltas, key and value lengths) is one of these."""


def _encode_record(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                   headers: Sequence[tuple[str, bytes | None]]) -> bytes:
    if not headers and key is not None and value is not None and 0 <= offset_delta < 64 \
            and 0 <= timestamp_delta < 64:
        key_len, value_len = len(key), len(value)
        if key_len < 64 and value_len < 64:  # every varint one byte: the record laid out in one join
            small = _ZIGZAG_SMALL
            return b"".join((encode_varint(key_len + value_len + 6), b"\x00", small[timestamp_delta],
                             small[offset_delta], small[key_len], key, small[value_len], value, b"\x00"))
    return _encode_record_general(offset_delta, timestamp_delta, key, value, headers)


def _encode_record_general(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                           headers: Sequence[tuple[str, bytes | None]]) -> bytes:
    body = bytearray(b"\x00")
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    _encode_bytes(body, key)
    _encode_bytes(body, value)
    body += encode_varint(len(headers))
    for hkey, hval in headers:
        _encode_bytes(body, hkey.encode())
        _encode_bytes(body, hval)
    return encode_varint(len(body)) + body


def encode_batch(records: Sequence[tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]] | Sequence[Record],
                 *, base_offset: int = 0, base_timestamp: int | None = None, compression: int = 0,
                 producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 is_transactional: bool = False, is_control: bool = False, timestamp_type: int = 0,
                 partition_leader_epoch: int = -1, timestamps: Sequence[int] | None = None,
                 last_offset_delta: int | None = None, max_timestamp: int | None = None,
                 delete_horizon: int | None = None) -> bytes:
    """Build one v2 batch.

    ``records`` are either (key, value, headers) tuples, numbered 0..n-1 from
    ``base_offset``, or ``Record`` objects, which keep their own offsets and timestamps
    (the cleaner re-encodes survivors this way). ``last_offset_delta`` and
    ``max_timestamp`` override the computed values so a rewritten batch keeps its
    original offset span and timestamp; ``delete_horizon`` sets attribute bit 6 and
    stores the horizon in baseTimestamp.
    """
    now = int(time.time() * 1000)
    entries: list[tuple[int, int, bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]] = []
    for index, item in enumerate(records):
        if isinstance(item, Record):
            entries.append((item.offset - base_offset, item.timestamp, item.key, item.value, item.headers))
        else:
            key, value, headers = item
            if timestamps is not None:
                ts = timestamps[index]
            elif base_timestamp is not None:
                ts = base_timestamp
            else:
                ts = now
            entries.append((index, ts, key, value, headers or ()))
    if delete_horizon is not None:
        first_ts = delete_horizon
    elif base_timestamp is not None and not (entries and isinstance(records[0], Record)):
        first_ts = base_timestamp
    elif entries:
        first_ts = entries[0][1]
    else:
        first_ts = NO_TIMESTAMP if base_timestamp is None else base_timestamp
    body = bytearray()
    for offset_delta, ts, key, value, headers in entries:
        body += _encode_record(offset_delta, ts - first_ts, key, value, headers)
    if last_offset_delta is None:
        last_offset_delta = entries[-1][0] if entries else 0
    if max_timestamp is None:
        max_timestamp = max((entry[1] for entry in entries), default=NO_TIMESTAMP)
    payload = compress(compression, body) if compression else bytes(body)
    attributes = (int(CompressionType(compression)) | (TIMESTAMP_TYPE_BIT if timestamp_type else 0)
                  | (TRANSACTIONAL_BIT if is_transactional else 0) | (CONTROL_BIT if is_control else 0)
                  | (DELETE_HORIZON_BIT if delete_horizon is not None else 0))
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(payload)
    out = bytearray(_HEADER.pack(base_offset, batch_length, partition_leader_epoch, MAGIC, 0, attributes,
                                 last_offset_delta, first_ts, max_timestamp, producer_id, producer_epoch,
                                 base_sequence, len(entries)))
    out += payload
    _UINT32.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


_NO_HEADER: Final = bytes(HEADER_SIZE)


def encode_plain_batch(records: Sequence[tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]],
                       timestamp: int, *, compression: int = 0) -> bytes:
    """``encode_batch(records, base_timestamp=timestamp, compression=compression)``, byte for byte, for the
    coordinator's own appends: (key, value, no headers) records all stamped ``timestamp``. Each record (key and
    value under 64 bytes: an offset commit's; or larger, its length under 4,096 bytes: a group's GroupMetadata)
    is laid out as parts of one join over the whole batch, with its varints from tables, instead of a record
    tuple, a bytes object and a function call per record; anything else goes to ``encode_batch``. tests/protocol/test_record_batch.py holds the two equal."""
    count = len(records)
    if compression or not count or count > len(SMALL_VARINTS):
        return encode_batch(records, base_timestamp=timestamp, compression=compression)
    small = _ZIGZAG_SMALL
    deltas = SMALL_VARINTS
    parts: list[bytes] = [_NO_HEADER]  # the header's room, filled in once the body's length is known
    add = parts.extend
    index = 0
    for key, value, headers in records:
        if headers or key is None or value is None:
            return encode_batch(records, base_timestamp=timestamp, compression=compression)
        key_len, value_len = len(key), len(value)
        delta = deltas[index]
        if key_len < 64 and value_len < 64:
            # length, attributes 0, timestamp delta 0, offset delta, key, value, no headers
            add((deltas[key_len + value_len + 5 + len(delta)], b"\x00\x00", delta, small[key_len], key,
                 small[value_len], value, b"\x00"))
        else:  # a larger record (a group's GroupMetadata, ~100 bytes a member): its lengths' varints from the table too
            if key_len >= len(deltas) or value_len >= len(deltas):
                return encode_batch(records, base_timestamp=timestamp, compression=compression)
            key_size, value_size = deltas[key_len], deltas[value_len]
            size = 3 + len(delta) + len(key_size) + key_len + len(value_size) + value_len
            if size >= len(deltas):
                return encode_batch(records, base_timestamp=timestamp, compression=compression)
            add((deltas[size], b"\x00\x00", delta, key_size, key, value_size, value, b"\x00"))
        index += 1
    out = bytearray(b"".join(parts))
    _HEADER.pack_into(out, 0, 0, len(out) - LOG_OVERHEAD, -1, MAGIC, 0, 0, count - 1, timestamp, timestamp, -1, -1,
                      -1, count)
    _UINT32.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def set_base_offset(batch: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Stamp the broker-assigned base offset; the CRC does not cover it."""
    _INT64.pack_into(batch, pos, base_offset)


def set_partition_leader_epoch(batch: bytearray | memoryview, pos: int, epoch: int) -> None:
    """Stamp the leader's epoch, as a Kafka leader does on append; the CRC does not cover it either."""
    _INT32.pack_into(batch, pos + PARTITION_LEADER_EPOCH_OFFSET, epoch)


def set_log_append_time(batch: bytearray | memoryview, pos: int, timestamp: int) -> None:
    """Mark the batch LogAppendTime and stamp maxTimestamp, recomputing the CRC it covers."""
    (attributes,) = _INT16.unpack_from(batch, pos + ATTRIBUTES_OFFSET)
    _INT16.pack_into(batch, pos + ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_BIT)
    _INT64.pack_into(batch, pos + MAX_TIMESTAMP_OFFSET, timestamp)
    (_, batch_length) = _PREFIX.unpack_from(batch, pos)
    end = pos + LOG_OVERHEAD + batch_length
    _UINT32.pack_into(batch, pos + CRC_OFFSET, crc32c(memoryview(batch)[pos + ATTRIBUTES_OFFSET:end]))
