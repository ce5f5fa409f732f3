"""Log compaction for ``cleanup.policy=compact``: the latest record per key wins.

Non-active segments are rewritten in groups (consecutive segments whose total size fits
``segment.bytes``) through ``storage.swap`` so a crash mid-way loses nothing. Surviving
batches keep their base offset, lastOffsetDelta, producer id/epoch and base sequence; a
batch left without records stays as an empty batch when it carries a producer id (the
producer state needs it) and is dropped otherwise. Control batches are kept as they are.

Tombstone horizon: a tombstone (null value) is dropped once the segment holding it was
last modified more than ``delete.retention.ms`` ago. A rewritten segment keeps the newest
modification time of the segments it replaces, so cleaning does not restart the clock.
(This is Kafka's pre-KIP-534 rule; the batch delete-horizon attribute is not used.)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, fields

import structlog

from protocol.record_batch import (
    HEADER_SIZE, BatchHeader, Record, decode_keys, decode_records, encode_batch, parse_header,
)
from storage.log import PartitionLog
from storage.segment import SCAN_CHUNK, Segment
from storage.swap import commit_swap, install_swap, write_cleaned
from storage.throttle import Throttler

_log = structlog.get_logger("groupcoord.storage.cleaner")


@dataclass
class CleanerStats:
    partitions_cleaned: int = 0
    segments_cleaned: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_kept: int = 0
    tombstones_dropped: int = 0
    seconds: float = 0.0

    def merge(self, other: CleanerStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def segment_batches(segment: Segment, throttler: Throttler | None = None) -> Iterator[tuple[BatchHeader, bytes]]:
    """Every batch of a (non-active, already validated) segment, read in large chunks."""
    pos = 0
    end = segment.size
    while pos < end:
        chunk = segment.read(pos, min(SCAN_CHUNK, end - pos))
        if throttler is not None:
            throttler.throttle(len(chunk))
        rel = 0
        while rel + HEADER_SIZE <= len(chunk):
            header = parse_header(chunk, rel)
            if rel + header.size > len(chunk):
                if rel == 0:
                    chunk = segment.read(pos, header.size)
                    continue
                break
            yield header, chunk[rel:rel + header.size]
            rel += header.size
        pos += rel


def dirty_ratio(log: PartitionLog, first_dirty_offset: int) -> float:
    cleanable = log.segments[:-1]
    total = sum(segment.size for segment in cleanable)
    if total == 0:
        return 0.0
    dirty = sum(segment.size for segment in cleanable if segment.next_offset > first_dirty_offset)
    return dirty / total


def cleanable_segments(log: PartitionLog, now_ms: int) -> list[Segment]:
    """Non-active segments, stopping at the first one younger than min.compaction.lag.ms."""
    out = []
    for segment in log.segments[:-1]:
        if segment.max_timestamp > now_ms - log.config.min_compaction_lag_ms:
            break
        out.append(segment)
    return out


def group_segments(segments: list[Segment], max_bytes: int) -> list[list[Segment]]:
    groups: list[list[Segment]] = []
    for segment in segments:
        if groups and sum(s.size for s in groups[-1]) + segment.size <= max_bytes:
            groups[-1].append(segment)
        else:
            groups.append([segment])
    return groups


class LogCleaner:
    """Compacts logs; remembers how far each was cleaned to judge its dirty ratio."""

    def __init__(self, throttler: Throttler | None = None) -> None:
        self.throttler = throttler or Throttler()
        self._first_dirty: dict[str, int] = {}

    def needs_cleaning(self, log: PartitionLog) -> bool:
        if not log.config.compact or len(log.segments) < 2:
            return False
        ratio = dirty_ratio(log, self._first_dirty.get(log.name, 0))
        return ratio > 0 and ratio >= log.config.min_cleanable_dirty_ratio

    def forget(self, log: PartitionLog) -> None:
        self._first_dirty.pop(log.name, None)

    async def clean(self, log: PartitionLog, *, now_ms: int | None = None) -> CleanerStats:
        stats = CleanerStats()
        if not log.config.compact:
            return stats
        started = time.perf_counter()
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        async with log.maintenance_lock:
            segments = cleanable_segments(log, now_ms)
            if not segments:
                return stats
            latest = await log.run_in_executor(self._build_offset_map, segments, stats)
            horizon = now_ms - log.config.delete_retention_ms
            for group in group_segments(segments, log.config.segment_bytes):
                new = await log.run_in_executor(self._clean_group, log, group, latest, horizon,
                                                log.config.index_interval_bytes, stats)
                log.replace_segments(group, new)
                stats.segments_cleaned += len(group)
            self._first_dirty[log.name] = segments[-1].next_offset
        stats.partitions_cleaned = 1
        stats.seconds = time.perf_counter() - started
        log.observer.on_clean(stats)
        _log.info("compacted log", partition=log.name, segments=stats.segments_cleaned,
                  bytes_read=stats.bytes_read, bytes_written=stats.bytes_written,
                  records_kept=stats.records_kept, tombstones_dropped=stats.tombstones_dropped)
        return stats

    def _build_offset_map(self, segments: list[Segment], stats: CleanerStats) -> dict[bytes, int]:
        latest: dict[bytes, int] = {}
        for segment in segments:
            for header, batch in segment_batches(segment, self.throttler):
                if header.is_control:
                    continue
                for offset, key, _ in decode_keys(batch, 0, header):
                    if key is not None:
                        latest[key] = offset
        return latest

    def _clean_group(self, log: PartitionLog, group: list[Segment], latest: dict[bytes, int],
                     horizon_ms: int, index_interval: int, stats: CleanerStats) -> Segment:
        mtime_ms = max(segment.last_modified_ms() for segment in group)
        base = group[0].base_offset
        chunks = self._survivors(group, latest, horizon_ms, stats)
        write_cleaned(log.directory, base, _counting(chunks, stats), mtime_ms / 1000)
        commit_swap(log.directory, base, [segment.base_offset for segment in group])
        install_swap(log.directory, base)
        new = Segment.open_existing(log.directory, base)
        new.scan(0, verify=False, index_interval_bytes=index_interval)
        new.rolling_timestamp = new.rolling_timestamp or mtime_ms
        new.write_indexes()
        return new

    def _survivors(self, group: list[Segment], latest: dict[bytes, int], horizon_ms: int,
                   stats: CleanerStats) -> Iterator[bytes]:
        for segment in group:
            drop_tombstones = segment.last_modified_ms() < horizon_ms
            for header, batch in segment_batches(segment, self.throttler):
                stats.bytes_read += len(batch)
                if header.is_control:
                    yield batch
                    continue
                keys = decode_keys(batch, 0, header)
                stats.records_read += len(keys)
                keep: set[int] = set()
                for offset, key, is_tombstone in keys:
                    if key is not None and latest.get(key) != offset:
                        continue
                    if is_tombstone and key is not None and drop_tombstones:
                        stats.tombstones_dropped += 1
                        continue
                    keep.add(offset)
                stats.records_kept += len(keep)
                if len(keep) == len(keys):
                    yield batch
                elif keep:
                    kept = [r for r in decode_records(batch, 0, header) if r.offset in keep]
                    yield _rebuild(header, kept)
                elif header.producer_id >= 0:
                    yield _rebuild(header, [])


def _rebuild(header: BatchHeader, kept: list[Record]) -> bytes:
    return encode_batch(kept, base_offset=header.base_offset, base_timestamp=header.base_timestamp,
                        compression=header.compression, producer_id=header.producer_id,
                        producer_epoch=header.producer_epoch, base_sequence=header.base_sequence,
                        is_transactional=header.is_transactional, timestamp_type=header.timestamp_type,
                        partition_leader_epoch=header.partition_leader_epoch,
                        last_offset_delta=header.last_offset_delta, max_timestamp=header.max_timestamp)


def _counting(chunks: Iterator[bytes], stats: CleanerStats) -> Iterator[bytes]:
    for chunk in chunks:
        stats.bytes_written += len(chunk)
        yield chunk
