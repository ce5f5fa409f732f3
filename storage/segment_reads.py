"""Reading whole batches out of one segment file (on an executor thread, or on the loop from the page cache).

The ``.log`` may hold reserved-but-not-yet-written bytes at its end and batches above the
high watermark; both readers stop before either, so a fetch never sees undurable data.

Every batch handed out has passed its CRC-32C check in this process: recovery trusts segments below the
recovery point (and everything after a clean shutdown) without reading them, so the check happens here, the
first time the bytes are read, whether by the group coordinator's replay or by a fetch. Bytes this process
appended were checked on their way in (PartitionLog._drain_writes counts them in ``verified_end``). A mismatch raises
``CorruptLogError`` naming the file and position; it is never served.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.record_batch import (
    ATTRIBUTES_OFFSET, HEADER_SIZE, BatchHeader, CorruptBatchError, decode_records, parse_header,
)
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.segment import Segment

SERVING_REFUSED: Final = "the partition is taken offline rather than serve it"


class _NotInSegment:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_IN_SEGMENT"


NOT_IN_SEGMENT: Final = _NotInSegment()
"""What a read answers when the segment holds no batch ending at or after its offset (Kafka's LogSegment.read
answers null): the log goes on to the next segment. A batch found but outside the bounds answers empty bytes, and
the log does not go on (Kafka's empty FetchDataInfo): the batches after it are not the ones the fetch asked for."""


class Window:
    """Bytes of one segment read ahead from a position, so that the batch headers a read walks (and a small
    answer) come from one ``pread`` rather than one each: a fetch near the log end locates its batch, walks the
    headers to its bounds and takes the answer's bytes all from one read of the segment's tail.

    A miss at ``pos`` reads ``[pos, until)`` (the read's reach: its byte budget's end plus the header that may end
    the walk there), at least ``WINDOW_MIN`` and at most ``WINDOW_MAX`` bytes, never past ``limit``. The bytes are
    those the per-header reads would see: everything a read serves lies below the high watermark, written before
    the read was planned; a window's end may hold bytes still being written, which, as before, end the walk (a
    short read) or are beyond what it uses."""

    __slots__ = ("segment", "limit", "until", "start", "data", "read")

    def __init__(self, segment: Segment, limit: int, until: int, cached_only: bool = False) -> None:
        self.segment = segment
        self.limit = limit
        self.until = until
        self.start = 0
        self.data = b""
        self.read = segment.read_cached if cached_only else segment.read
        """``cached_only``: every read from the page cache or ``NotCached`` (a read run on the event loop)."""

    def header(self, pos: int) -> BatchHeader | None:
        """The header at ``pos``, or None past the written bytes (fewer than a header's bytes there)."""
        rel = pos - self.start
        if rel < 0 or rel + HEADER_SIZE > len(self.data):
            size = min(max(self.until - pos, WINDOW_MIN), WINDOW_MAX, self.limit - pos)
            self.start, self.data, rel = pos, self.read(pos, size), 0
            if len(self.data) < HEADER_SIZE:
                return None
        return parse_header(self.data, rel)

    def bytes_at(self, pos: int, size: int) -> bytes:
        """``size`` bytes from ``pos`` (fewer past the written bytes): the window's when it holds them."""
        rel = pos - self.start
        if rel >= 0 and rel + size <= len(self.data):
            return self.data if rel == 0 and size == len(self.data) else self.data[rel:rel + size]
        return self.read(pos, size)


WINDOW_MIN: Final = 4 * 1024
"""The least a window reads: a batch located from an index entry lies within about an index interval of it."""
WINDOW_MAX: Final = 64 * 1024


def read_batches(segment: Segment, offset: int, start: int, limit: int, max_bytes: int, min_one: bool,
                 high_watermark: int, view: bool = False,
                 cached_only: bool = False) -> bytes | memoryview | _NotInSegment:
    """Whole batches from the one holding ``offset``: at most ``max_bytes``, or one whole batch with ``min_one``;
    ``NOT_IN_SEGMENT`` when no batch here holds it or a later offset.

    With ``view`` the answer may be a memoryview of the bytes read rather than a copy of their whole batches:
    a fetch of megabytes then cuts off the partial batch at the end without copying the rest. With
    ``cached_only`` every read is ``Segment.read_cached`` (``NotCached`` raised as it met it)."""
    position = start
    window = Window(segment, limit, start + max(max_bytes, 0) + HEADER_SIZE, cached_only)
    try:
        position = locate_batch(window, offset, start)
        if position is None:
            return NOT_IN_SEGMENT
        data = window.bytes_at(position, min(max(max_bytes, 0), limit - position))
        view = memoryview(data)
        end = 0
        for pos, header in _whole_headers(data):
            if header.base_offset >= high_watermark:
                break
            check_crc(segment, position, view, pos, header)
            end = pos + header.size
        if end == 0 and min_one:
            header = parse_header(window.bytes_at(position, HEADER_SIZE))
            if header.base_offset >= high_watermark:
                return b""
            data, end = window.bytes_at(position, header.size), header.size
            check_crc(segment, position, memoryview(data), 0, header)
    except CorruptBatchError as exc:
        raise CorruptLogError(segment.directory.name, segment.log_path, position, str(exc),
                              consequence=SERVING_REFUSED) from exc
    if view and end < len(data):
        return memoryview(data)[:end]
    return data[:end]


REGION_MIN: Final = 64 * 1024
"""The smallest answer a fetch takes as a file region: below it the bytes are read (one pread) and written
with the answer's other parts, cheaper than a descriptor ``dup`` and a ``sendfile`` of their own."""


def read_region(segment: Segment, offset: int, start: int, limit: int, max_bytes: int, min_one: bool,
                high_watermark: int, walk_from: int,
                cached_only: bool = False) -> FileRegion | bytes | memoryview | _NotInSegment:
    """``read_batches``' answer (the same whole batches, by the same bounds) as a region of the segment file,
    found by reading batch headers only: from the batch holding ``offset``, the walk jumps to ``walk_from``
    (``OffsetIndex.walk_start`` of the bounds: every batch before it fits them) and reads headers from there.

    Every byte served has passed its CRC-32C check in this process, as with ``read_batches``: a region is
    handed out only when it lies below ``segment.verified_end``; otherwise (a segment trusted at recovery and
    not yet read) the batches are read and checked by ``read_batches``. An answer under ``REGION_MIN`` is read
    too. ``cached_only``: as for ``read_batches``."""
    def read_checked() -> bytes | memoryview | _NotInSegment:
        return read_batches(segment, offset, start, limit, max_bytes, min_one, high_watermark, view=True,
                            cached_only=cached_only)

    position = start
    window = Window(segment, limit, start + max(max_bytes, 0) + HEADER_SIZE, cached_only)
    try:
        position = locate_batch(window, offset, start)
        if position is None:
            return NOT_IN_SEGMENT
        budget_end = position + min(max(max_bytes, 0), limit - position)
        window.until = budget_end + HEADER_SIZE  # the walk's last header begins by the budget's end
        end = walk = max(position, walk_from)
        last: BatchHeader | None = None
        while end + HEADER_SIZE <= limit:
            header = window.header(end)
            if header is None:
                break  # past the written bytes
            if header.base_offset >= high_watermark or end + header.size > budget_end:
                break
            end += header.size
            last = header
        if last is None and walk > position:  # the index's batch does not fit the bounds it was chosen by
            return read_checked()
        if last is None and min_one:
            last = parse_header(window.bytes_at(position, HEADER_SIZE))
            if last.base_offset >= high_watermark:
                return b""
            end = position + last.size
    except CorruptBatchError as exc:
        raise CorruptLogError(segment.directory.name, segment.log_path, position, str(exc),
                              consequence=SERVING_REFUSED) from exc
    if last is None:
        return b""
    if end > segment.verified_end:
        return read_checked()
    if end - position < REGION_MIN:
        return window.bytes_at(position, end - position)
    return segment.region(position, end - position, last.next_offset)


def check_crc(segment: Segment, position: int, view: memoryview, pos: int, header: BatchHeader) -> None:
    """Check the CRC of the whole batch at ``view[pos:]`` (read at file ``position``; ``header`` is its parsed
    header) unless this process already has.

    ``segment.verified_end`` advances while the verified bytes stay contiguous from the segment's start, so
    bytes are checked once, however often they are replayed or fetched.
    """
    start = position + pos
    end = start + header.size
    verified = segment.verified_end
    if end <= verified:
        return
    if header.crc != crc32c(view[pos + ATTRIBUTES_OFFSET:pos + header.size]):
        raise CorruptLogError(segment.directory.name, segment.log_path, start,
                              f"CRC-32C mismatch in batch with base offset {header.base_offset}",
                              consequence=SERVING_REFUSED)
    if start <= verified:
        segment.verified_end = max(segment.verified_end, end)


def _whole_headers(data: bytes) -> Iterator[tuple[int, BatchHeader]]:
    pos = 0
    while pos + HEADER_SIZE <= len(data):
        header = parse_header(data, pos)
        if pos + header.size > len(data):
            return
        yield pos, header
        pos += header.size


def locate_batch(window: Window, offset: int, start: int) -> int | None:
    """Position of the first batch at or after ``start`` whose last offset is >= ``offset`` (its headers read
    through ``window``)."""
    pos = start
    while pos + HEADER_SIZE <= window.limit:
        header = window.header(pos)
        if header is None:
            return None  # past the written bytes
        if header.base_offset + header.last_offset_delta >= offset:
            return pos
        pos += header.size
    return None


def find_timestamp(segment: Segment, ts: int, start: int, limit: int, high_watermark: int,
                   log_start_offset: int) -> tuple[int, int, int] | None:
    """First (offset, timestamp, batch leader epoch) at or after ``ts``; LogAppendTime batches answer with
    their append time."""
    pos = start
    while pos + HEADER_SIZE <= limit:
        head = segment.read(pos, HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            return None  # past the written bytes
        header = parse_header(head)
        if header.base_offset >= high_watermark:
            return None
        visible = not header.is_control and header.base_offset + header.last_offset_delta >= log_start_offset
        if visible and header.max_timestamp >= ts:
            batch = segment.read(pos, header.size)
            if header.timestamp_type == 1:
                records = decode_records(batch, 0, header)
                if records:
                    return max(records[0].offset, log_start_offset), header.max_timestamp, header.partition_leader_epoch
            else:
                for record in decode_records(batch, 0, header):
                    if record.timestamp >= ts and record.offset >= log_start_offset:
                        return record.offset, record.timestamp, header.partition_leader_epoch
        pos += header.size
    return None
