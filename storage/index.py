"""Sparse offset and time indexes of one segment, in Kafka's on-disk layout.

Both live in memory (arrays) and are written out when the segment rolls or the log
closes; after an unclean shutdown they are rebuilt from the ``.log``, which is the
source of truth. ``.index`` entries are (int32 relative offset, int32 position),
``.timeindex`` entries (int64 timestamp, int32 relative offset), both big-endian.
"""

from __future__ import annotations

import operator
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
OFFSET_ENTRY_SIZE = _OFFSET_ENTRY.size
TIME_ENTRY_SIZE = _TIME_ENTRY.size


class IndexFormatError(ValueError):
    """An index file does not decode to a strictly increasing entry list; rebuild it."""


class OffsetIndex:
    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.relative_offsets = array("i")
        self.positions = array("i")

    def __len__(self) -> int:
        return len(self.relative_offsets)

    @property
    def size_bytes(self) -> int:
        return len(self.relative_offsets) * OFFSET_ENTRY_SIZE

    def append(self, offset: int, position: int) -> None:
        relative = offset - self.base_offset
        if self.relative_offsets and relative <= self.relative_offsets[-1]:
            return
        self.relative_offsets.append(relative)
        self.positions.append(position)

    def lookup(self, offset: int) -> int:
        """Byte position from which a forward scan finds the batch holding ``offset``."""
        slot = bisect_right(self.relative_offsets, offset - self.base_offset) - 1
        return self.positions[slot] if slot >= 0 else 0

    def walk_start(self, end_position: int, below_offset: int) -> int:
        """Where a forward walk of batch headers starts to find the last whole batch that ends by
        ``end_position`` and begins below ``below_offset`` (a fetch's bound: its byte budget, the high watermark),
        without reading every header before it: the batch of the entry before the last one inside both bounds
        (that last one's batch begins by ``end_position`` and lies wholly below ``below_offset``, so every batch
        before it fits, and the walk from its predecessor reads the header of the batch that ends where it
        begins). 0 when no such entry exists."""
        inside = min(bisect_right(self.positions, end_position),
                     bisect_left(self.relative_offsets, below_offset - self.base_offset)) - 1
        return self.positions[inside - 1] if inside >= 1 else 0

    def last_position(self) -> int:
        return self.positions[-1] if self.positions else 0

    def to_bytes(self) -> bytes:
        # One struct call for the whole index: a checkpoint serialises the active segment's index on the
        # event loop, so this must stay cheap for tens of thousands of entries.
        count = min(len(self.relative_offsets), len(self.positions))
        interleaved = [0] * (2 * count)
        interleaved[0::2] = self.relative_offsets[:count]
        interleaved[1::2] = self.positions[:count]
        return struct.pack(f">{2 * count}i", *interleaved)

    def truncate_from(self, offset: int) -> None:
        """Drop every entry for ``offset`` and above (they may describe bytes that were never made durable)."""
        keep = bisect_left(self.relative_offsets, offset - self.base_offset)
        del self.relative_offsets[keep:]
        del self.positions[keep:]

    @classmethod
    def from_bytes(cls, base_offset: int, data: bytes, log_size: int) -> OffsetIndex:
        """Decode and check a ``.index`` file; unpacked and compared in bulk, since a restart loads the index of
        every segment (a 1 GiB segment has a quarter of a million entries)."""
        index = cls(base_offset)
        count = len(data) // OFFSET_ENTRY_SIZE
        if count == 0:
            return index
        values = array("i")
        values.frombytes(data[:count * OFFSET_ENTRY_SIZE])
        if sys.byteorder == "little":
            values.byteswap()
        relatives, positions = values[0::2], values[1::2]
        count = _without_zero_tail(relatives)
        del relatives[count:], positions[count:]
        if relatives[0] < 0 or positions[0] < 0 or positions[-1] >= max(log_size, 1) \
                or not _strictly_increasing(relatives) or not _strictly_increasing(positions):
            raise IndexFormatError("offset index entries are out of order or past the log")
        index.relative_offsets, index.positions = relatives, positions
        return index


class TimeIndex:
    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.timestamps = array("q")
        self.relative_offsets = array("i")

    def __len__(self) -> int:
        return len(self.timestamps)

    @property
    def size_bytes(self) -> int:
        return len(self.timestamps) * TIME_ENTRY_SIZE

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Record (largest timestamp so far, its offset) if the timestamp grew."""
        if timestamp < 0 or (self.timestamps and timestamp <= self.timestamps[-1]):
            return
        relative = offset - self.base_offset
        if self.relative_offsets and relative < self.relative_offsets[-1]:
            return
        self.timestamps.append(timestamp)
        self.relative_offsets.append(relative)

    def last_offset_before(self, timestamp: int) -> int | None:
        """Offset of the last entry whose timestamp is strictly below ``timestamp``.

        Every record up to that offset is older than the target, so a scan may start at
        the batch holding it; ties are excluded because an earlier un-indexed batch may
        carry the very same timestamp.
        """
        slot = bisect_left(self.timestamps, timestamp) - 1
        return self.base_offset + self.relative_offsets[slot] if slot >= 0 else None

    def max_timestamp(self) -> int:
        return self.timestamps[-1] if self.timestamps else -1

    def to_bytes(self) -> bytes:
        count = min(len(self.timestamps), len(self.relative_offsets))
        interleaved: list[int] = [0] * (2 * count)
        interleaved[0::2] = self.timestamps[:count]
        interleaved[1::2] = self.relative_offsets[:count]
        return struct.pack(">" + "qi" * count, *interleaved)

    def truncate_from(self, offset: int) -> None:
        """Drop every entry pointing at ``offset`` or above."""
        relative = offset - self.base_offset
        keep = len(self.relative_offsets)
        while keep and self.relative_offsets[keep - 1] >= relative:
            keep -= 1
        del self.timestamps[keep:]
        del self.relative_offsets[keep:]

    @classmethod
    def from_bytes(cls, base_offset: int, data: bytes) -> TimeIndex:
        index = cls(base_offset)
        count = len(data) // TIME_ENTRY_SIZE
        if count == 0:
            return index
        values = struct.unpack(">" + "qi" * count, data[:count * TIME_ENTRY_SIZE])
        timestamps, relatives = array("q", values[0::2]), array("i", values[1::2])
        count = _without_zero_tail(timestamps)
        del timestamps[count:], relatives[count:]
        if relatives[0] < 0 or not _strictly_increasing(timestamps) \
                or not all(map(operator.le, relatives, relatives[1:])):
            raise IndexFormatError("time index entries are out of order")
        index.timestamps, index.relative_offsets = timestamps, relatives
        return index


def _without_zero_tail(keys: array) -> int:
    """Entries before a pre-allocated zero tail (Kafka pre-allocates index files). The keys (relative offsets,
    timestamps) strictly increase from a non-negative first one, so a zero after the first entry can only be
    where the written entries end."""
    try:
        return keys.index(0, 1)
    except ValueError:
        return len(keys)


def _strictly_increasing(values: array) -> bool:
    return all(map(operator.lt, values, values[1:]))
