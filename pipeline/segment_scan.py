"""Walking a segment's batches while tolerating damage.

An analysis tool must not stop at the first bad byte, and must not hide it either: a batch that
fails its CRC or does not decode is reported and skipped (its length field still tells where the
next batch starts), and an incomplete write at the end of the file (a torn tail, what a crash
leaves behind) is reported and ends the walk. Only when the length field itself is implausible is
there no way to find the next batch, and then the walk ends with a `corrupt` report.
"""

from __future__ import annotations

import struct
from typing import Iterator

from groupcoord.protocol.record_batch import (
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    BatchHeader,
    Record,
    decode_records,
    parse_header,
    verify_crc,
)

from groupcoord.pipeline.schema import RecordKind
from groupcoord.protocol.frozen import frozen_dataclass

_FRAME = struct.Struct(">qi")  # a batch's base offset and length, the framing's two fields


@frozen_dataclass
class GoodBatch:
    position: int
    header: BatchHeader
    records: list[Record]


@frozen_dataclass
class Damage:
    """A stretch of the file that yields no records; `records_claimed` is the header's count if known."""

    position: int
    kind: RecordKind
    error: str
    base_offset: int | None = None
    records_claimed: int | None = None
    bytes_affected: int = 0


def _describe_tail(buf: bytes, position: int) -> str:
    remaining = len(buf) - position
    if not any(buf[position:]):
        return f"zero-filled tail of {remaining} bytes at position {position}"
    return f"incomplete batch at position {position}: {remaining} bytes left in the file"


def scan_batches(buf: bytes, *, verify: bool = True) -> Iterator[GoodBatch | Damage]:
    """Yield every batch of a segment image in file order, or the damage found in its place."""
    for position, size, damage in frame_batches(buf):
        yield damage if damage is not None else check_batch(buf, position, size, verify)


def frame_batches(buf: bytes) -> Iterator[tuple[int, int, Damage | None]]:
    """The framing alone: (position, size, None) for each stretch its length field delimits, or
    (position, 0, damage) where the framing itself is broken (which ends the walk)."""
    position, end = 0, len(buf)
    while position < end:
        if end - position < LOG_OVERHEAD:
            yield position, 0, Damage(position, RecordKind.TORN_TAIL, _describe_tail(buf, position),
                                      bytes_affected=end - position)
            return
        base_offset, batch_length = _FRAME.unpack_from(buf, position)
        size = batch_length + LOG_OVERHEAD
        if batch_length < MIN_BATCH_LENGTH:
            if not any(buf[position:]):
                yield position, 0, Damage(position, RecordKind.TORN_TAIL, _describe_tail(buf, position),
                                          bytes_affected=end - position)
            else:
                yield position, 0, Damage(
                    position,
                    RecordKind.CORRUPT,
                    f"batch length {batch_length} at position {position} is below the minimum {MIN_BATCH_LENGTH};"
                    " the rest of the segment cannot be walked",
                    base_offset=base_offset,
                    bytes_affected=end - position,
                )
            return
        if position + size > end:
            yield position, 0, Damage(
                position,
                RecordKind.TORN_TAIL,
                _describe_tail(buf, position) + f" (batch needs {size})",
                base_offset=base_offset,
                bytes_affected=end - position,
            )
            return
        yield position, size, None
        position += size


def check_batch(buf: bytes, position: int, size: int, verify: bool) -> GoodBatch | Damage:
    """The batch framed at `position`: its records, or why it yields none."""
    base_offset = int.from_bytes(buf[position : position + 8], "big", signed=True)
    magic = buf[position + MAGIC_OFFSET]
    if magic != MAGIC:
        return Damage(
            position,
            RecordKind.CORRUPT,
            f"batch at position {position} has magic {magic}; only record batch v2 (magic 2) is read",
            base_offset=base_offset,
            bytes_affected=size,
        )
    header = parse_header(buf, position)
    if verify and not verify_crc(buf, position):
        return Damage(
            position,
            RecordKind.CORRUPT,
            f"CRC-32C mismatch in batch at position {position} (base offset {base_offset})",
            base_offset=base_offset,
            records_claimed=header.records_count,
            bytes_affected=size,
        )
    try:
        records = decode_records(buf, position, header)
    except Exception as exc:  # any decoding failure of one batch is that batch's damage, not the scan's
        return Damage(
            position,
            RecordKind.CORRUPT,
            f"batch at position {position} (base offset {base_offset}) does not decode: {exc}",
            base_offset=base_offset,
            records_claimed=header.records_count,
            bytes_affected=size,
        )
    return GoodBatch(position, header, records)
