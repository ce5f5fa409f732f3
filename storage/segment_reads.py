"""Reading whole batches out of one segment file (runs on an executor thread).

The ``.log`` may hold reserved-but-not-yet-written bytes at its end and batches above the
high watermark; both readers stop before either, so a fetch never sees undurable data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from groupcoord.protocol.record_batch import HEADER_SIZE, BatchHeader, decode_records, parse_header
from groupcoord.storage.segment import Segment

LOCATE_CHUNK: Final = 64 * 1024


def read_batches(segment: Segment, offset: int, start: int, limit: int, max_bytes: int, min_one: bool,
                 high_watermark: int) -> bytes:
    """Whole batches from the one holding ``offset``: at most ``max_bytes``, or one whole batch with ``min_one``."""
    position = locate_batch(segment, offset, start, limit)
    if position is None:
        return b""
    data = segment.read(position, min(max(max_bytes, 0), limit - position))
    end = 0
    for pos, header in _whole_headers(data):
        if header.base_offset >= high_watermark:
            break
        end = pos + header.size
    if end == 0 and min_one:
        header = parse_header(segment.read(position, HEADER_SIZE))
        if header.base_offset >= high_watermark:
            return b""
        return segment.read(position, header.size)
    return data[:end]


def _whole_headers(data: bytes) -> Iterator[tuple[int, BatchHeader]]:
    pos = 0
    while pos + HEADER_SIZE <= len(data):
        header = parse_header(data, pos)
        if pos + header.size > len(data):
            return
        yield pos, header
        pos += header.size


def locate_batch(segment: Segment, offset: int, start: int, limit: int) -> int | None:
    """Position of the first batch at or after ``start`` whose last offset is >= ``offset``."""
    pos = start
    while pos + HEADER_SIZE <= limit:
        chunk = segment.read(pos, min(LOCATE_CHUNK, limit - pos))
        rel = 0
        while rel + HEADER_SIZE <= len(chunk):
            header = parse_header(chunk, rel)
            if header.base_offset + header.last_offset_delta >= offset:
                return pos + rel
            rel += header.size
        if rel == 0:
            return None  # past the written bytes
        pos += rel
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
