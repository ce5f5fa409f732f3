"""The records of one batch read column by column, in runs of records of one shape.

A coordinator's replay reads every record of its log for its (offset, key, value), a million of them for
bench/replay_bench.py, and the batches it reads are its own writes: a loop turn's commit requests, one after the
other, each request's records of one key length (one group id length, one topic, a 4-byte partition) and one
value length, a timestamp delta of one byte, no headers, offset deltas 0, 1, 2, ... across the batch. Walked in
Python, each record's varints, bounds and slices cost ~8,400 instructions. The records of one shape and one
offset-delta width (one byte below 64, two bytes from 64 to 4095) all have the same length, so such a run of
records is a run of fixed-size rows, and every framing byte sits at a fixed position of its row. Each such column
is checked at once with one strided slice (``b[start:end:size]``, a C loop), and the keys and values are read by
one ``struct`` unpack per 64 rows: about 600 instructions a record.

A batch of several requests of groups whose ids differ in length (a real log's) is several runs. A run's shape is
read from its first row; it ends at the first row whose framing bytes are not that shape's, found by
``bytes.lstrip`` on each framing column (the count of its leading rows that hold the shape's byte there), and the
next run starts there. A row that holds every framing byte of the shape is a record of that shape (its length
says where it ends, its key and value lengths where they do), so runs end exactly where the shapes change.

What is accepted is exactly what ``record_batch._decode_key_value_list`` reads the same way, and nothing it
refuses: in every row, the record's length is the canonical varint of the one length its fields add up to (so
the fields end where the record ends and the rows tile the records section, whose size must be the runs' sum); the
attributes are any byte (not read); the timestamp delta one byte below 0x80 (not read); the offset delta the
canonical varint of the row's index (0, 1, 2, ...: a compacted batch with gaps is read by the general loop); the
key and value lengths the canonical varints of the row's shape's; the header count 0. Anything else (a null key or
value, headers, a multi-byte timestamp delta, a non-canonical varint, damage, runs shorter than
``MIN_AVERAGE_RUN`` rows on average) returns None, and the general loop reads the batch, with its precise errors.
tests/protocol/test_record_shapes.py holds the two equal on batches of every kind.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Final

from groupcoord.protocol.memo import Memo
from groupcoord.protocol.varint import SMALL_VARINTS, decode_varlong, encode_varint

ROWS_PER_UNPACK: Final = 64
"""Rows one ``struct`` unpack reads (its format repeats one row's this many times; a run's rest has its own)."""
ONE_BYTE_DELTAS: Final = 64
"""Offset deltas 0..63 take one byte, 64..4095 two (varint.SMALL_VARINTS)."""
MAX_RECORDS: Final = len(SMALL_VARINTS)
"""Batches of more records are read by the general loop."""
MAX_FIELD: Final = 1 << 20
"""Longer keys or values are read by the general loop."""
MIN_AVERAGE_RUN: Final = 8
"""A batch is declined once it holds more runs than one per this many of its records: a run's shape, bounds and
columns cost about as much as a few records of the record loop, so a batch of very short runs (commits of one
partition each, a producer's records of every size) is cheaper record by record. The coordinator's batches hold
one run per commit request (per topic of it), tens or hundreds of partitions each in bench/replay_bench.py."""
SHAPES_KEPT: Final = 256
"""Layouts kept, one per key length and value length met (a group id's length makes a shape)."""
FORMATS_KEPT: Final = 1024
"""Compiled unpack formats kept: per shape and delta width, the full one and the rests met (at most 63)."""

_ONE_BYTE: Final = b"".join(SMALL_VARINTS[:ONE_BYTE_DELTAS])
"""Row k's offset delta for k < 64 (one byte), the column a run of such rows must hold."""
_TWO_BYTES: Final = b"".join(SMALL_VARINTS[ONE_BYTE_DELTAS:])
_TWO_BYTE_FIRST: Final = _TWO_BYTES[0::2]
"""Rows 64..4095 (indexed from row 64): the first byte of each one's offset delta."""
_TWO_BYTE_SECOND: Final = _TWO_BYTES[1::2]
"""And the second."""


class _Run:
    """One offset-delta width's rows of a shape: their size, the bytes every row holds at fixed positions (each
    as a one-byte ``bytes``, what ``lstrip`` takes), where the timestamp delta and the offset delta are, and the
    unpack format of one row's key and value. (A plain class: a NamedTuple or dataclass costs start-up time, and
    this module is imported with the codec.)"""

    __slots__ = ("size", "constants", "timestamp_at", "delta_at", "row_format")

    def __init__(self, size: int, constants: tuple[tuple[int, bytes], ...], timestamp_at: int, delta_at: int,
                 row_format: str) -> None:
        self.size = size
        self.constants = constants
        self.timestamp_at = timestamp_at
        self.delta_at = delta_at
        self.row_format = row_format


def _run(width: int, key_len: int, value_len: int) -> _Run:
    key_len_bytes, value_len_bytes = encode_varint(key_len), encode_varint(value_len)
    length = 2 + width + len(key_len_bytes) + key_len + len(value_len_bytes) + value_len + 1  # what follows it
    length_bytes = encode_varint(length)
    timestamp_at = len(length_bytes) + 1  # after the attributes
    key_len_at = timestamp_at + 1 + width
    key_at = key_len_at + len(key_len_bytes)
    value_len_at = key_at + key_len
    value_at = value_len_at + len(value_len_bytes)
    headers_at = value_at + value_len
    constants = (*enumerate(length_bytes), *((key_len_at + i, x) for i, x in enumerate(key_len_bytes)),
                 *((value_len_at + i, x) for i, x in enumerate(value_len_bytes)), (headers_at, 0))
    row_format = f"{key_at}x{key_len}s{value_at - value_len_at}x{value_len}s1x"
    return _Run(headers_at + 1, tuple((at, bytes((x,))) for at, x in constants), timestamp_at, timestamp_at + 1,
                row_format)


_layouts = Memo(lambda shape: (_run(1, *shape), _run(2, *shape)), SHAPES_KEPT)
_formats = Memo(lambda fmt_rows: struct.Struct(">" + fmt_rows[0] * fmt_rows[1]).unpack_from, FORMATS_KEPT)


def _leading_rows(b: bytes, start: int, rows: int, run: _Run) -> int:
    """How many of the ``rows`` rows of ``run`` from ``start`` hold its constant bytes, counted from the first
    (the run ends at the first that does not). A column is compared whole first (``memcmp``); only one that
    differs is stripped of its leading run (``lstrip`` calls ``memchr`` once per byte it strips)."""
    size = run.size
    end = start + rows * size
    for at, byte in run.constants:
        column = b[start + at:end:size]
        if column != byte * rows:
            rows -= len(column.lstrip(byte))
            end = start + rows * size
    return rows


def _deltas_ok(b: bytes, start: int, rows: int, run: _Run, first_row: int) -> bool:
    """Whether the ``rows`` rows of ``run`` from ``start`` hold one-byte timestamp deltas and the canonical offset
    deltas of rows ``first_row``, ``first_row + 1``, ..."""
    size = run.size
    end = start + rows * size
    if not b[start + run.timestamp_at:end:size].isascii():
        return False
    at = start + run.delta_at
    if first_row < ONE_BYTE_DELTAS:
        return b[at:end:size] == _ONE_BYTE[first_row:first_row + rows]
    first = first_row - ONE_BYTE_DELTAS
    return (b[at:end:size] == _TWO_BYTE_FIRST[first:first + rows]
            and b[at + 1:end:size] == _TWO_BYTE_SECOND[first:first + rows])


def _read_rows(b: bytes, start: int, rows: int, run: _Run, out: list[bytes]) -> None:
    """Append each row's key and value, in order, to ``out``."""
    step = run.size * ROWS_PER_UNPACK
    whole = start + (rows // ROWS_PER_UNPACK) * step
    if whole > start:
        unpack = _formats[(run.row_format, ROWS_PER_UNPACK)]
        for at in range(start, whole, step):
            out += unpack(b, at)
    if rows % ROWS_PER_UNPACK:
        out += _formats[(run.row_format, rows % ROWS_PER_UNPACK)](b, whole)


def column_key_values(b: bytes, count: int, base_offset: int) -> Iterable[tuple[int, bytes, bytes]] | None:
    """(offset, key, value) of the ``count`` records in ``b`` (a batch's records section) if they are runs of
    records of one shape each (see the module's docstring), to be read once; None: read them with the general
    loop."""
    if not 0 < count <= MAX_RECORDS:
        return None
    size = len(b)
    turns = count // MIN_AVERAGE_RUN + 2  # (+ 2: the first run, and a run across row 64 is read in two parts)
    fields: list[bytes] = []
    start = row = 0
    while row < count:  # a run of one shape and one delta width a turn
        if not turns:
            return None
        turns -= 1
        width = 1 if row < ONE_BYTE_DELTAS else 2
        try:
            _, p = decode_varlong(b, start)  # the row's length, attributes, timestamp and offset deltas: the
            key_len, p = decode_varlong(b, p + 2 + width)  # columns below check them
            value_len, _ = decode_varlong(b, p + max(key_len, 0))
        except (IndexError, ValueError):
            return None
        if not (0 <= key_len <= MAX_FIELD and 0 <= value_len <= MAX_FIELD):
            return None
        run = _layouts[(key_len, value_len)][width - 1]
        rows = min((ONE_BYTE_DELTAS if width == 1 else MAX_RECORDS), count) - row  # the rest of this width's rows
        rows = _leading_rows(b, start, min(rows, (size - start) // run.size), run)
        if not rows or not _deltas_ok(b, start, rows, run, row):
            return None
        _read_rows(b, start, rows, run, fields)
        start += rows * run.size
        row += rows
    if start != size:
        return None
    return zip(range(base_offset, base_offset + count), fields[0::2], fields[1::2])
