"""Log compaction for ``cleanup.policy=compact``: the latest record per key wins.

Non-active segments are rewritten in groups (consecutive segments whose total size fits
``segment.bytes``) through ``storage.swap`` so a crash mid-way loses nothing. Surviving
batches keep their base offset, lastOffsetDelta, producer id/epoch and base sequence; a
batch left without records stays as an empty batch when it carries a producer id (the
producer state needs it) and is dropped otherwise.

Transactions, by Kafka's rules (``storage.cleaner_txns``): batches of aborted transactions are removed
whatever their keys (and their keys do not count for the latest value), transaction markers are kept
until no batch of their transaction is left and then until the delete horizon the cleaner stamps on them
(``delete.retention.ms``), then removed; the last batch of each producer in the cleaned range is kept, as
an empty batch if need be, so its epoch and sequence survive a restart. Nothing at or past the last stable
offset is cleaned: an open transaction's outcome is not known yet. Each cleaned segment's ``.txnindex``
keeps the aborted transactions whose ABORT marker it still holds.

Tombstone horizon: a tombstone (null value) is dropped once the segment holding it was
last modified more than ``delete.retention.ms`` ago. A rewritten segment keeps the newest
modification time of the segments it replaces, so cleaning does not restart the clock.
(This is Kafka's pre-KIP-534 rule; the batch delete-horizon attribute is not used.)

Scheduling follows Kafka's LogCleanerManager: each log's first dirty offset (persisted in the
data directory's ``cleaner-offset-checkpoint``, see ``storage.cleaner_checkpoint``) splits it
into a clean head and a dirty tail. A log is cleaned when its dirty ratio exceeds
``min.cleanable.dirty.ratio``, or when a dirty segment's first batch is older than
``max.compaction.lag.ms`` and something is cleanable; ``min.compaction.lag.ms``, the active
segment and the high watermark bound what may be cleaned.
"""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from weakref import WeakKeyDictionary

import structlog

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.record_batch import (
    HEADER_SIZE, BatchHeader, CorruptBatchError, Record, decode_keys, decode_records, encode_batch, parse_header, verify_crc,
)
from groupcoord.storage.cleaner_checkpoint import CleanerCheckpoint, TopicPartition
from groupcoord.storage.cleaner_txns import CleanedTransactions, scan_transactions
from groupcoord.storage.config import LONG_MAX
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.segment import SCAN_CHUNK, Segment
from groupcoord.storage.swap import commit_swap, install_swap, write_cleaned
from groupcoord.storage.throttle import Throttler
from groupcoord.storage.txn_index import AbortedTxn

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
    aborted_records_dropped: int = 0
    markers_dropped: int = 0
    seconds: float = 0.0

    def merge(self, other: CleanerStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def segment_batches(segment: Segment, throttler: Throttler | None = None) -> Iterator[tuple[BatchHeader, bytes]]:
    """Every batch of a non-active segment, read in large chunks, each CRC-checked: compaction must neither
    decide on the keys of a corrupt batch nor copy it into the cleaned segment (``CorruptLogError``)."""
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
            if not verify_crc(chunk, rel):
                raise CorruptLogError(segment.directory.name, segment.log_path, pos + rel,
                                      f"CRC-32C mismatch in batch with base offset {header.base_offset}",
                                      consequence="not compacted; the partition is taken offline")
            yield header, chunk[rel:rel + header.size]
            rel += header.size
        pos += rel


def _floor_index(log: PartitionLog, offset: int) -> int:
    """Index of the segment holding ``offset`` (Kafka's floorKey); 0 when ``offset`` lies before the log."""
    return max(bisect_right([segment.base_offset for segment in log.segments], offset) - 1, 0)


def segments_between(log: PartitionLog, start: int, end: int) -> list[Segment]:
    """Kafka's logSegments(from, to): the segment holding ``start`` and those after it that begin before ``end``."""
    if start >= end:
        return []
    return [segment for segment in log.segments[_floor_index(log, start):] if segment.base_offset < end]


def non_active_segments_from(log: PartitionLog, offset: int) -> list[Segment]:
    """Kafka's nonActiveLogSegmentsFrom: the segment holding ``offset`` up to, not including, the active one."""
    return segments_between(log, offset, log.active_segment.base_offset)


def first_uncleanable_offset(log: PartitionLog, first_dirty_offset: int, now_ms: int) -> int:
    """The base offset of the first segment cleaning must leave alone (Kafka's cleanableOffsets).

    Cleaning stops at the active segment, at the high watermark (Kafka: the last stable offset)
    and at the first dirty segment holding a record younger than min.compaction.lag.ms. Kafka then
    rounds down to a segment boundary (calculateCleanableBytes) because it rewrites whole segments.
    """
    bound = min(log.stable_offset(), log.active_segment.base_offset)
    lag_ms = max(log.config.min_compaction_lag_ms, 0)
    if lag_ms > 0:
        young = next((segment for segment in non_active_segments_from(log, first_dirty_offset)
                      if segment.max_timestamp > now_ms - lag_ms), None)
        if young is not None:
            bound = min(bound, young.base_offset)
    remaining = non_active_segments_from(log, max(first_dirty_offset, bound))
    return remaining[0].base_offset if remaining else log.active_segment.base_offset


def first_batch_timestamp(segment: Segment) -> int:
    """Kafka's LogSegment.getFirstBatchTimestamp: the first batch's max timestamp, LONG_MAX when unknown."""
    if segment.size < HEADER_SIZE:
        return LONG_MAX
    try:
        header = parse_header(segment.read(0, HEADER_SIZE))
    except CorruptBatchError:
        return LONG_MAX
    return header.max_timestamp if header.max_timestamp >= 0 else LONG_MAX


def max_compaction_delay(log: PartitionLog, first_dirty_offset: int, now_ms: int,
                         first_timestamp: Callable[[Segment], int] = first_batch_timestamp) -> int:
    """How long ago max.compaction.lag.ms made the dirty section due (Kafka's maxCompactionDelay); 0 if not due.

    Kafka ages each dirty non-active segment by its first batch's timestamp (segments without a
    positive one are ignored) and takes the earliest, so one old record in an otherwise quiet
    log is enough to force compaction.
    """
    stamps = [stamp for stamp in map(first_timestamp, non_active_segments_from(log, first_dirty_offset)) if stamp > 0]
    earliest = min(stamps, default=LONG_MAX)
    clean_until = now_ms - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


@frozen_dataclass
class LogToClean:
    """One compacted log's standing in a cleaner pass (Kafka's LogToClean)."""

    log: PartitionLog
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    """Segments before the first dirty offset: already compacted."""
    cleanable_bytes: int
    """Dirty segments the cleaner may rewrite now."""
    compaction_delay_ms: int

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    @property
    def need_compaction_now(self) -> bool:
        """max.compaction.lag.ms has passed for some dirty record."""
        return self.compaction_delay_ms > 0

    @property
    def eligible(self) -> bool:
        """Kafka's filter: due by max.compaction.lag.ms with something to clean, or dirtier than the ratio."""
        if self.total_bytes == 0:
            return False
        return ((self.need_compaction_now and self.cleanable_bytes > 0)
                or self.cleanable_ratio > self.log.config.min_cleanable_dirty_ratio)


def group_segments(segments: list[Segment], max_bytes: int) -> list[list[Segment]]:
    groups: list[list[Segment]] = []
    for segment in segments:
        if groups and sum(s.size for s in groups[-1]) + segment.size <= max_bytes:
            groups[-1].append(segment)
        else:
            groups.append([segment])
    return groups


class LogCleaner:
    """Compacts logs and keeps Kafka's per-log first dirty offset (how far each log was cleaned).

    Given a data directory, that progress is kept in its ``cleaner-offset-checkpoint`` so a
    restarted broker does not take every compacted log for fully dirty.
    """

    def __init__(self, throttler: Throttler | None = None, data_dir: Path | None = None, *,
                 clock: Callable[[], int] = wall_clock_ms, checkpoint: CleanerCheckpoint | None = None,
                 first_dirty: dict[TopicPartition, int] | None = None) -> None:
        """Progress is kept in ``data_dir``'s checkpoint, read now; or in ``checkpoint``, already read as
        ``first_dirty`` (the LogManager reads it at start and makes its cleaner on first use)."""
        self.throttler = throttler or Throttler()
        self.clock = clock
        if checkpoint is None and data_dir is not None:
            checkpoint = CleanerCheckpoint(data_dir)
        self._checkpoint = checkpoint
        if first_dirty is None:
            first_dirty = checkpoint.read() if checkpoint is not None else {}
        self._first_dirty: dict[TopicPartition, int] = dict(first_dirty)
        self._persist_lock = asyncio.Lock()
        self._first_timestamps: WeakKeyDictionary[Segment, int] = WeakKeyDictionary()

    @property
    def checkpoints(self) -> dict[TopicPartition, int]:
        """The first dirty offset of every log cleaned so far, as the checkpoint file holds it."""
        return dict(self._first_dirty)

    def first_dirty_offset(self, log: PartitionLog) -> int:
        """The checkpointed offset, reset to the log start when it lies outside the log (Kafka's cleanableOffsets).

        Kafka resets an offset past the log end to the log start too (it assumes the tail was lost
        and the whole log needs cleaning), and remembers the reset; it reaches the file with the
        next checkpoint write.
        """
        key = (log.topic, log.partition)
        offset = self._first_dirty.get(key)
        if offset is None:
            return log.log_start_offset
        if offset < log.log_start_offset:
            if not (log.config.compact and log.config.delete):
                _log.warning("resetting first dirty offset to the log start", partition=log.name,
                             checkpointed=offset, log_start_offset=log.log_start_offset)
        elif offset > log.log_end_offset:
            _log.warning("checkpointed first dirty offset is past the log end; resetting to the log start",
                         partition=log.name, checkpointed=offset, log_end_offset=log.log_end_offset,
                         log_start_offset=log.log_start_offset)
        else:
            return offset
        self._first_dirty[key] = log.log_start_offset
        return log.log_start_offset

    def to_clean(self, log: PartitionLog, now_ms: int | None = None) -> LogToClean:
        now_ms = self.clock() if now_ms is None else now_ms
        first_dirty = self.first_dirty_offset(log)
        uncleanable = first_uncleanable_offset(log, first_dirty, now_ms)
        clean_bytes = sum(segment.size for segment in segments_between(log, -1, first_dirty))
        cleanable = segments_between(log, min(first_dirty, uncleanable), uncleanable)
        delay = max_compaction_delay(log, first_dirty, now_ms, self._first_batch_timestamp)
        return LogToClean(log, first_dirty, uncleanable, clean_bytes,
                          sum(segment.size for segment in cleanable), delay)

    def needs_cleaning(self, log: PartitionLog, now_ms: int | None = None) -> bool:
        return log.config.compact and self.to_clean(log, now_ms).eligible

    def grab_filthiest(self, logs: Iterable[PartitionLog], now_ms: int | None = None) -> LogToClean | None:
        """Kafka's grabFilthiestCompactedLog: the eligible compacted log with the highest dirty ratio.

        A log made due by max.compaction.lag.ms becomes eligible below min.cleanable.dirty.ratio,
        but Kafka still ranks every eligible log by its ratio alone, and so does this. Logs whose
        maintenance lock is held (being cleaned or trimmed by retention) are skipped, as Kafka
        skips partitions already in progress.
        """
        now_ms = self.clock() if now_ms is None else now_ms
        candidates = [self.to_clean(log, now_ms) for log in logs
                      if log.config.compact and not log.maintenance_lock.locked()]
        eligible = [candidate for candidate in candidates if candidate.eligible]
        return max(eligible, key=lambda candidate: candidate.cleanable_ratio, default=None)

    async def forget(self, log: PartitionLog) -> None:
        """Drop a deleted log's checkpoint entry, so a topic re-created under its name starts dirty."""
        if self._first_dirty.pop((log.topic, log.partition), None) is not None:
            await self._persist(log)

    async def clean(self, log: PartitionLog, *, now_ms: int | None = None) -> CleanerStats:
        """Compact every non-active segment before the first uncleanable offset, whatever the dirty ratio."""
        stats = CleanerStats()
        if not log.config.compact:
            return stats
        started = time.perf_counter()
        now_ms = self.clock() if now_ms is None else now_ms
        async with log.maintenance_lock:
            target = self.to_clean(log, now_ms)
            segments = [segment for segment in log.segments[:-1]
                        if segment.base_offset < target.first_uncleanable_offset]
            if not segments:
                return stats
            scanned = await scan_transactions(log)
            uncleanable = target.first_uncleanable_offset
            if scanned.first_unstable_offset is not None:
                # an open transaction's outcome is not known: stop at the segment holding its first batch
                held = [segment for segment in segments if segment.next_offset > scanned.first_unstable_offset]
                if held:
                    uncleanable = min(uncleanable, held[0].base_offset)
                    segments = segments[:segments.index(held[0])]
                if not segments:
                    return stats
            aborted = scanned.aborted
            latest, last_of_producer = await log.run_in_executor(self._build_offset_map, segments, aborted, stats)
            horizon = now_ms - log.config.delete_retention_ms
            txns = CleanedTransactions(aborted)
            rules = _TxnRules(txns, last_of_producer, now_ms, log.config.delete_retention_ms)
            for group in group_segments(segments, log.config.segment_bytes):
                new = await log.run_in_executor(self._clean_group, log, group, latest, horizon,
                                                log.config.index_interval_bytes, stats, rules)
                log.replace_segments(group, new)
                stats.segments_cleaned += len(group)
            # A segment boundary, not the last cleaned offset: a cleaned segment that lost its
            # tail records ends before the next segment begins.
            self._first_dirty[(log.topic, log.partition)] = max(target.first_dirty_offset, uncleanable)
            await self._persist(log)
        stats.partitions_cleaned = 1
        stats.seconds = time.perf_counter() - started
        log.observer.on_clean(stats)
        _log.info("compacted log", partition=log.name, segments=stats.segments_cleaned,
                  bytes_read=stats.bytes_read, bytes_written=stats.bytes_written,
                  records_kept=stats.records_kept, tombstones_dropped=stats.tombstones_dropped)
        return stats

    async def _persist(self, log: PartitionLog) -> None:
        """Write the checkpoint; a failure is logged, not raised, as Kafka's updateCheckpoints does."""
        if self._checkpoint is None:
            return
        async with self._persist_lock:
            snapshot = dict(self._first_dirty)
            try:
                await log.run_in_executor(self._checkpoint.write, snapshot)
            except OSError as exc:
                _log.error("cannot write the cleaner checkpoint", path=str(self._checkpoint.path), error=str(exc))

    def _first_batch_timestamp(self, segment: Segment) -> int:
        """Cached like Kafka's rollingBasedTimestamp: once a segment has a first batch, it never changes."""
        stamp = self._first_timestamps.get(segment)
        if stamp is None:
            stamp = first_batch_timestamp(segment)
            if segment.size >= HEADER_SIZE:
                self._first_timestamps[segment] = stamp
        return stamp

    def _build_offset_map(self, segments: list[Segment], aborted: list[AbortedTxn],
                          stats: CleanerStats) -> tuple[dict[bytes, int], dict[int, int]]:
        """The latest offset of every key outside aborted transactions (Kafka's buildOffsetMap skips aborted
        batches), and the offset of each producer's last batch in the range."""
        latest: dict[bytes, int] = {}
        last_of_producer: dict[int, int] = {}
        txns = CleanedTransactions(aborted)
        for segment in segments:
            for header, batch in segment_batches(segment, self.throttler):
                if header.producer_id >= 0:
                    last_of_producer[header.producer_id] = header.base_offset
                if header.is_control:
                    txns.on_control(header, batch)
                    continue
                if txns.on_batch(header):
                    continue
                for offset, key, _ in decode_keys(batch, 0, header):
                    if key is not None:
                        latest[key] = offset
        return latest, last_of_producer

    def _clean_group(self, log: PartitionLog, group: list[Segment], latest: dict[bytes, int],
                     horizon_ms: int, index_interval: int, stats: CleanerStats,
                     rules: _TxnRules | None = None) -> Segment:
        rules = rules or _TxnRules(CleanedTransactions([]), {}, self.clock(), log.config.delete_retention_ms)
        mtime_ms = max(segment.last_modified_ms() for segment in group)
        base = group[0].base_offset
        kept_before = len(rules.txns.kept_aborts)
        chunks = self._survivors(group, latest, horizon_ms, stats, rules)
        write_cleaned(log.directory, base, _counting(chunks, stats), mtime_ms / 1000)
        commit_swap(log.directory, base, [segment.base_offset for segment in group])
        install_swap(log.directory, base)
        new = Segment.open_existing(log.directory, base)
        new.scan(0, verify=False, index_interval_bytes=index_interval)
        new.forget_recent_batches()  # (never the active segment)
        new.rolling_timestamp = new.rolling_timestamp or mtime_ms
        new.write_indexes()
        for txn in rules.txns.kept_aborts[kept_before:]:
            new.add_aborted_txn(txn)
        new.write_txn_index()
        return new

    def _survivors(self, group: list[Segment], latest: dict[bytes, int], horizon_ms: int,
                   stats: CleanerStats, rules: _TxnRules) -> Iterator[bytes]:
        for segment in group:
            drop_tombstones = segment.last_modified_ms() < horizon_ms
            for header, batch in segment_batches(segment, self.throttler):
                stats.bytes_read += len(batch)
                producers_last = (header.producer_id >= 0
                                  and rules.last_of_producer.get(header.producer_id) == header.base_offset)
                if header.is_control:
                    kept = rules.control(header, batch, producers_last)
                    if kept is not None:
                        yield kept
                    else:
                        stats.markers_dropped += 1
                    continue
                if rules.txns.on_batch(header):
                    stats.aborted_records_dropped += header.records_count
                    if producers_last:
                        yield _rebuild(header, [])
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


@dataclass(slots=True)
class _TxnRules:
    """One cleaning pass's transaction state, carried across its segment groups as Kafka carries it."""
    txns: CleanedTransactions
    last_of_producer: dict[int, int]
    now_ms: int
    delete_retention_ms: int

    def control(self, header: BatchHeader, batch: bytes, producers_last: bool) -> bytes | None:
        """The control batch to write (as it was, or stamped with a delete horizon), or None to drop it."""
        if not self.txns.on_control(header, batch):
            return batch
        if producers_last:
            return batch                      # the producer's epoch must survive: Kafka's RETAIN_EMPTY
        if header.has_delete_horizon:
            return None if header.base_timestamp <= self.now_ms else batch
        records = decode_records(batch, 0, header)
        return encode_batch(records, base_offset=header.base_offset, compression=header.compression,
                            producer_id=header.producer_id, producer_epoch=header.producer_epoch,
                            base_sequence=header.base_sequence, is_transactional=header.is_transactional,
                            is_control=True, timestamp_type=header.timestamp_type,
                            partition_leader_epoch=header.partition_leader_epoch,
                            last_offset_delta=header.last_offset_delta, max_timestamp=header.max_timestamp,
                            delete_horizon=self.now_ms + self.delete_retention_ms)


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
