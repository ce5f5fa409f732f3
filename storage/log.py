"""PartitionLog: the durable, segmented log of one ``<topic>-<partition>`` directory.

An append assigns offsets and reserves its bytes on the event loop (so offsets follow
write order), then queues the write; the data directory's shared write round (or, for a log
without one, a writer task of its own) takes the queue, merging adjacent appends into a single
pwrite, so concurrent producers share an executor hop. ``append_now`` does an append's loop side
in one call when the log can take it at once; ``append`` is the general path. Fsyncs
run outside the append lock, which is what lets the BATCH policy share one fsync among
every append that queued up during the previous one. The high watermark only moves once
bytes are durable under the policy, and readers never look past it.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Final

import structlog

from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.record_batch import (
    PARTITION_LEADER_EPOCH_OFFSET, BatchHeader, CorruptBatchError, iter_batches, set_base_offset, set_log_append_time,
    set_partition_leader_epoch,
)
from groupcoord.storage.config import FsyncPolicy, LogConfig, TimestampType
from groupcoord.storage.errors import CorruptLogError, LogClosedError
from groupcoord.storage.fifo_lock import FifoLock
from groupcoord.storage.file_pool import SHARED_FILES, FilePool
from groupcoord.storage.group_commit import FlushFailed, GroupCommit, Runs, write_runs, write_runs_and_flush
from groupcoord.storage.kept_loop import KeptLoop
from groupcoord.storage.observer import NULL_OBSERVER, StorageObserver
from groupcoord.storage.recovery import (
    CLEAN_SHUTDOWN_MARKER, recover_segments, write_clean_shutdown_marker, write_recovery_point,
)
from groupcoord.storage.segment import Segment, fsync_directory
from groupcoord.storage.planned_read import READ_AGAIN, READ_ON, PlannedRead
from groupcoord.storage.prompt_future import PromptFuture
from groupcoord.storage.segment_reads import find_timestamp
from groupcoord.storage.write_rounds import WriteRounds
from groupcoord.storage.txn_index import AbortedTxn

__all__ = ["CLEAN_SHUTDOWN_MARKER", "AppendResult", "PartitionLog", "parse_partition_dir"]

REPLAY_CHUNK: Final = 1024 * 1024
_MAX_RELATIVE_OFFSET: Final = 0x7FFFFFFF
_BASE_OFFSET: Final = attrgetter("base_offset")  # segment_for bisects the segments by it, building no list

_log = structlog.get_logger("groupcoord.storage.log")

WRITE_RETRY_BACKOFF_S: Final = 0.5
"""After a failed write, appends are refused at once for this long before the next one retries the disk."""


@frozen_dataclass
class AppendResult:
    """Where an append landed: the first and last offsets assigned, the log-append time and the largest timestamp."""
    base_offset: int
    last_offset: int
    log_append_time: int
    """-1 unless the batches were stamped with LogAppendTime."""
    max_timestamp: int


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    topic, dash, partition = name.rpartition("-")
    if not dash or not topic or not partition.isdigit():
        return None
    return topic, int(partition)


class PartitionLog:
    def __init__(self, directory: Path, config: LogConfig, fsync: FsyncPolicy, executor: Executor,
                 owns_executor: bool, observer: StorageObserver, files: FilePool = SHARED_FILES,
                 group_commit: GroupCommit | None = None, write_rounds: WriteRounds | None = None) -> None:
        parsed = parse_partition_dir(directory.name)
        if parsed is None:
            raise ValueError(f"partition directory {directory.name!r} is not named <topic>-<partition>")
        self.topic, self.partition = parsed
        self.directory = directory
        self.config = config
        self.fsync = fsync
        self.observer = observer
        self.files = files
        self.segments: list[Segment] = []
        self.recovery_point = 0
        """Everything below this offset is on disk with its indexes: a crash re-checks only what follows."""
        self.corruption: CorruptLogError | None = None
        """Set when a read found a batch failing its CRC: the log then refuses every read and append."""
        self._corruption_listeners: list[Callable[[PartitionLog, CorruptLogError], None]] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.high_watermark = 0
        self.leader_epoch = 0
        """A single broker has led every partition since its creation: epoch 0, stamped on each appended batch
        and reported by ListOffsets, as Kafka's leader does (its Metadata says 0 too)."""
        self._executor = executor
        self._owns_executor = owns_executor
        self.group_commit = group_commit
        """fsync=batch: the data directory's shared write-and-sync rounds (one syncfs for many logs); None: this
        log's own write-and-fdatasync job per group of appends."""
        self.write_rounds = write_rounds
        """Any other policy: the data directory's shared write rounds (one storage job for the writes of every log
        ready in a loop turn, storage.write_rounds); None: this log's own write job per group of appends."""
        self._append_lock = FifoLock()  # (append_now asks it whether it is free)
        self._loop = KeptLoop()  # the loop appends run on, asked once (storage/kept_loop.py)
        self.maintenance_lock = asyncio.Lock()
        """Held by the cleaner and retention so they never rewrite and delete the same segment."""
        self._reserved_seq = 0
        self._written_seq = 0
        self._synced_seq = 0
        self._pending: list[_PendingWrite] = []
        self._writer: asyncio.Future[None] | None = None
        """Set while queued appends are being written: the writer Task, or the future the shared rounds resolve."""
        self._in_round: tuple[list[_PendingWrite], list[Segment]] | None = None
        """The appends a shared round took (take_writes) and the segments it syncs, until round_done."""
        self._failure: BaseException | None = None
        """The write (or fsync) that failed: appends are refused until a retry finds the disk writable again."""
        self._failed_at = 0.0
        self.write_retry_backoff_s = WRITE_RETRY_BACKOFF_S
        self._sync_task: asyncio.Future[None] | None = None
        self._listeners: list[Callable[[PartitionLog], None]] = []
        self._closed = False
        self.first_unstable_offset: Callable[[], int | None] | None = None
        """Set by the owner of the producer state: the first offset of the earliest undecided transaction
        (None while that state is not known yet). Without it the log has no transactions."""

    def __repr__(self) -> str:
        return f"PartitionLog({self.name}, start={self.log_start_offset}, end={self.log_end_offset})"

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def active_segment(self) -> Segment:
        return self.segments[-1]

    @property
    def size_bytes(self) -> int:
        return sum(segment.size for segment in self.segments)

    # ---- opening and recovery -----------------------------------------------------------
    @classmethod
    async def open(cls, directory: Path, config: LogConfig, fsync: FsyncPolicy, *,
                   executor: Executor | None = None, observer: StorageObserver | None = None,
                   files: FilePool | None = None, recovery_point: int = 0,
                   group_commit: GroupCommit | None = None,
                   write_rounds: WriteRounds | None = None) -> PartitionLog:
        """Open (creating if absent) and recover the log in ``directory``.

        ``recovery_point`` is this partition's entry in the data directory's recovery-point checkpoint;
        ``files`` the pool its segment files are opened through; ``group_commit`` the data directory's shared
        fsync=batch rounds, if any; ``write_rounds`` its shared write rounds under any other policy, if any.
        """
        owns = executor is None
        if executor is None:
            executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"log-{directory.name}")
        log = cls(Path(directory), config, fsync, executor, owns, observer or NULL_OBSERVER, files or SHARED_FILES,
                  group_commit, write_rounds)
        try:
            await asyncio.get_running_loop().run_in_executor(executor, log._recover, recovery_point)
        except BaseException:
            log._close_files()
            if owns:
                executor.shutdown(wait=False)
            raise
        return log

    def _recover(self, recovery_point: int) -> None:
        recovered = recover_segments(self.directory, self.name, self.config, recovery_point=recovery_point,
                                     files=self.files)
        self.segments = recovered.segments
        self.recovery_point = recovered.recovery_point
        self.log_start_offset = self.segments[0].base_offset
        self.log_end_offset = self.high_watermark = self.active_segment.next_offset

    # ---- appending ---------------------------------------------------------------------
    def add_append_listener(self, cb: Callable[[PartitionLog], None]) -> None:
        self._listeners.append(cb)

    def remove_append_listener(self, cb: Callable[[PartitionLog], None]) -> None:
        if cb in self._listeners:
            self._listeners.remove(cb)

    def add_corruption_listener(self, cb: Callable[[PartitionLog, CorruptLogError], None]) -> None:
        """``cb(log, error)`` runs once, on the event loop, when a read finds a batch failing its CRC."""
        self._corruption_listeners.append(cb)

    def mark_corrupt(self, exc: CorruptLogError) -> None:
        """Take the log offline: found by a read here, or by the cleaner."""
        if self.corruption is not None:
            return
        self.corruption = exc
        _log.error("partition offline: a batch read from disk failed its CRC check and is not served",
                   partition=self.name, segment=exc.segment.name, position=exc.position, reason=exc.reason)
        for listener in tuple(self._corruption_listeners):
            try:
                listener(self, exc)
            except Exception:
                _log.exception("corruption listener failed", partition=self.name)

    def append_now(self, batches: bytes | bytearray | memoryview, *, log_append_time: int | None = None,
                   on_assigned: Callable[[int, int], None] | None = None,
                   headers: list[tuple[int, BatchHeader]] | None = None) -> asyncio.Future[AppendResult] | None:
        """``append`` (offsets assigned) without a coroutine, when it can be done at once: the append lock free
        and unwaited for, the log open, healthy and writable, no segment to roll, fsync not ``always``. The
        offsets are assigned and the write queued now, in this call; the future returned gets the AppendResult
        once the bytes are durable under the policy (the write round's completion resolves it, after moving the
        high watermark), or the write's error. None: nothing was done, the caller awaits ``append``, which then
        takes the lock behind whoever holds or waits for it (a fast append never overtakes a queued one).

        Why: the Produce path made a Task per partition append to run ``append``; this path costs no Task, no
        coroutine and no lock acquire. With the shared rounds joined without a writer Task (``take_writes``):
        bench.produce_instructions fsync=batch, 267,374 -> 233,647 instructions per partition append (one A/B
        run each, produce15)."""
        if not self._takes_now():
            return None
        started = time.perf_counter()
        buf, tail, headers, log_append_time, size = self._prepare(batches, headers, log_append_time)
        return self._reserve_now(buf, tail, headers, log_append_time, size, on_assigned, started)

    async def append(self, batches: bytes | bytearray | memoryview, *, assign_offsets: bool = True,
                     log_append_time: int | None = None,
                     on_assigned: Callable[[int, int], None] | None = None,
                     headers: list[tuple[int, BatchHeader]] | None = None) -> AppendResult:
        """Append whole v2 batches; returns once they are durable under the fsync policy.

        With ``assign_offsets`` the broker numbers the batches from the log end offset by
        overwriting baseOffset (not covered by the CRC). Without it, the batches' own
        offsets are kept and must continue the log. Topics configured with
        LogAppendTime are stamped with the append time even if ``log_append_time`` is None.
        ``on_assigned(first, last)`` runs under the append lock as soon as the offsets are known, before
        they can become visible: the producer state records where a transaction begins there, so the last
        stable offset never lets a reader past it. ``headers``: the batches' (position, header) as the caller has
        just parsed them from these very bytes (a validated produced batch), not parsed again; they are stamped
        as the bytes are. When ``append_now`` can take it, it does (the same steps, without the lock).
        """
        started = time.perf_counter()
        buf, tail, headers, log_append_time, size = self._prepare(batches, headers, log_append_time)
        if assign_offsets and self._takes_now():
            now = self._reserve_now(buf, tail, headers, log_append_time, size, on_assigned, started)
            if now is not None:
                return await now
        async with self._append_lock:
            if self._failure is not None:  # (no coroutine to await on every healthy append)
                await self._retry_after_failure()
            self._check_writable()
            first_offset, next_offset = self._stamp(buf, headers, assign_offsets, log_append_time)
            if on_assigned is not None:
                on_assigned(first_offset, next_offset - 1)
            segment = self.active_segment
            if self._should_roll(segment, size, next_offset - 1):
                segment = await self._roll(first_offset)
            written = self._loop().create_future()
            seq = self._queue(segment, buf, tail, size, headers, next_offset, written, None, 0.0)
        await written
        try:
            if self.fsync is _ALWAYS:
                await self._fsync(segment)
            elif self.fsync is _BATCH and self._synced_seq < seq:  # (the write round usually synced it)
                await self._group_commit(seq)
        except OSError as exc:
            # After a failed fsync the kernel may have dropped the dirty pages: what is on disk is unknown
            # until the tail is read again, so the log stops taking appends until a retry re-checks it.
            self._record_failure(exc, "log fsync failed")
            raise
        self.observer.on_append(time.perf_counter() - started, size)
        self._advance_high_watermark(next_offset)
        return _result(first_offset, next_offset, log_append_time, headers)

    def _prepare(self, batches: bytes | bytearray | memoryview, headers: list[tuple[int, BatchHeader]] | None,
                 log_append_time: int | None,
                 ) -> tuple[bytearray, memoryview | None, list[tuple[int, BatchHeader]], int | None, int]:
        """(buffer to stamp, uncopied tail, headers, log-append time, size in bytes) of an append."""
        if headers is None:
            headers = list(iter_batches(batches, verify=False))
        if not headers:
            raise CorruptBatchError("append needs at least one record batch", 0)
        if log_append_time is None and self.config.message_timestamp_type is _LOG_APPEND_TIME:
            log_append_time = int(time.time() * 1000)
        if (type(batches) is bytes and len(headers) == 1 and log_append_time is None
                and len(batches) >= _SHARED_TAIL_MIN):
            # One large produced batch (immutable bytes): only the fields stamped below (base offset, leader
            # epoch: before the CRC-covered part) are copied; the rest is written from the request's bytes.
            buf = bytearray(batches[:_STAMPED_PREFIX])
            tail: memoryview | None = memoryview(batches)[_STAMPED_PREFIX:]
            return buf, tail, headers, log_append_time, len(buf) + len(tail)
        buf = bytearray(batches)
        return buf, None, headers, log_append_time, len(buf)

    def _takes_now(self) -> bool:
        """Whether an append may be reserved without the lock (``append_now``'s conditions, bar the roll)."""
        return (self._failure is None and self.corruption is None and not self._closed
                and self.fsync is not _ALWAYS and self._append_lock.free())

    def _reserve_now(self, buf: bytearray, tail: memoryview | None, headers: list[tuple[int, BatchHeader]],
                     log_append_time: int | None, size: int, on_assigned: Callable[[int, int], None] | None,
                     started: float) -> asyncio.Future[AppendResult] | None:
        """``append_now`` once ``_takes_now``: None, with nothing changed, when the active segment must roll."""
        end = self.log_end_offset
        for _, header in headers:
            end += header.last_offset_delta + 1
        segment = self.active_segment
        if self._should_roll(segment, size, end - 1):
            return None
        first_offset, next_offset = self._stamp(buf, headers, True, log_append_time)
        if on_assigned is not None:
            on_assigned(first_offset, next_offset - 1)
        done: asyncio.Future[AppendResult] = PromptFuture(loop=self._loop())
        self._queue(segment, buf, tail, size, headers, next_offset, done,
                    _result(first_offset, next_offset, log_append_time, headers), started)
        return done

    def _stamp(self, buf: bytearray, headers: list[tuple[int, BatchHeader]], assign_offsets: bool,
               log_append_time: int | None) -> tuple[int, int]:
        """Number (or check) and stamp the batches from the log end offset: (first offset, next offset)."""
        next_offset = self.log_end_offset
        for pos, header in headers:
            if assign_offsets:
                set_base_offset(buf, pos, next_offset)
                header.base_offset = next_offset
                set_partition_leader_epoch(buf, pos, self.leader_epoch)
                header.partition_leader_epoch = self.leader_epoch
            elif header.base_offset < next_offset:
                raise ValueError(f"batch base offset {header.base_offset} is below the log end "
                                 f"offset {next_offset} of {self.name}")
            next_offset = header.base_offset + header.last_offset_delta + 1
            if log_append_time is not None:
                set_log_append_time(buf, pos, log_append_time)
                header.max_timestamp = log_append_time
                header.attributes |= 0x08
        return headers[0][1].base_offset, next_offset

    def _queue(self, segment: Segment, buf: bytearray, tail: memoryview | None, size: int,
               headers: list[tuple[int, BatchHeader]], next_offset: int, done: asyncio.Future,
               result: AppendResult | None, started: float) -> int:
        """Reserve the bytes at the end of ``segment`` and publish the offsets now; the write itself is queued
        and coalesced with other appends' writes into one executor hop. Returns the write's sequence number."""
        position = segment.size
        segment.size = position + size
        interval = self.config.index_interval_bytes
        for pos, header in headers:
            segment.track_batch(position + pos, header, interval)
        self.log_end_offset = next_offset
        self._reserved_seq = seq = self._reserved_seq + 1
        self._pending.append(_PendingWrite(segment, position, buf, seq, done, tail, size, result, next_offset,
                                           started))
        if self._writer is None:
            self._start_writer()
        return seq

    def _should_roll(self, segment: Segment, nbytes: int, last_offset: int) -> bool:
        size = segment.size
        if size == 0:
            return False
        config = self.config
        rolling = segment.rolling_timestamp
        return (size + nbytes > config.segment_bytes
                or last_offset - segment.base_offset > _MAX_RELATIVE_OFFSET
                or (rolling is not None and int(time.time() * 1000) - rolling > config.max_segment_ms)
                or segment.index_full(config.segment_index_bytes))

    def _start_writer(self) -> None:
        """Have the queued appends written: by the data directory's shared rounds, which take them as the round
        starts (``take_writes``, ``round_done``: no Task, no coroutine), or, for a log without them, by a writer
        Task of its own. ``_writer`` is what ``_settle_writes`` waits for either way."""
        rounds = self.group_commit if self.fsync is _BATCH else self.write_rounds
        if rounds is None:
            self._writer = self._loop().create_task(self._drain_writes())
        else:
            self._writer = self._loop().create_future()
            rounds.join(self)

    def take_writes(self) -> tuple[Runs, list[Segment]] | None:
        """(a shared round starts) The queued writes as runs, and under fsync=batch the segments to sync (held open
        until ``round_done``); None when there is nothing to write."""
        batch, self._pending = self._pending, []
        if batch and self._failure is not None:
            for item in batch:
                _settle(item.done, LogClosedError(f"log {self.name} failed: {self._failure}"))
            batch = []
        if not batch:
            self._writer_idle()
            return None
        runs = _runs_of(batch)
        segments = _held_segments(runs) if self.fsync is _BATCH else []
        self._in_round = (batch, segments)
        return runs, segments

    def round_done(self, outcome: BaseException | float | None) -> None:
        """(a shared round ended) What ``_drain_writes`` does after each write, then this log joins the next
        round if appends queued meanwhile."""
        batch, segments = self._in_round  # type: ignore[misc]
        self._in_round = None
        for segment in segments:
            segment.end_read()
        if isinstance(outcome, FlushFailed):
            self._batch_failed(batch, outcome.__cause__ or outcome, "log fsync failed")
        elif isinstance(outcome, BaseException):
            self._batch_failed(batch, outcome, "log write failed")
        else:
            if self.fsync is _BATCH:
                if segments:
                    self.observer.on_fsync(outcome)  # type: ignore[arg-type]
                self._synced_seq = max(self._synced_seq, batch[-1].seq)
            self._batch_written(batch)
        if self._pending:
            (self.group_commit if self.fsync is _BATCH else self.write_rounds).join(self)  # type: ignore[union-attr]
        else:
            self._writer_idle()

    def _writer_idle(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None and not writer.done():
            writer.set_result(None)

    async def _drain_writes(self) -> None:
        """A log without shared rounds: write queued appends in order, merging adjacent ones into a single
        pwrite, one executor job per group."""
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                if self._failure is not None:
                    for item in batch:
                        _settle(item.done, LogClosedError(f"log {self.name} failed: {self._failure}"))
                    continue
                runs = _runs_of(batch)
                if self.fsync is _BATCH:
                    if not await self._write_and_sync(runs, batch):
                        continue
                else:
                    try:
                        await self._run(write_runs, runs)
                    except BaseException as exc:
                        self._batch_failed(batch, exc, "log write failed")
                        continue
                self._batch_written(batch)
        finally:
            self._writer = None

    def _batch_failed(self, batch: list[_PendingWrite], exc: BaseException, what: str) -> None:
        self._record_failure(exc, what)
        for item in batch:
            _settle(item.done, exc)

    def _batch_written(self, batch: list[_PendingWrite]) -> None:
        """A group of appends is written (and synced, where the policy's round does it)."""
        self._written_seq = batch[-1].seq
        for item in batch:
            # Bytes this process appended count as checked (Segment.verified_end): a produced batch
            # passed its CRC check in validate_batch, the rest were encoded here with theirs, and
            # nothing rewrites a CRC-covered field without recomputing it. A fetch of fresh data
            # then does not CRC every byte again (0.16 ms CPU per MB).
            segment = item.segment
            if segment.verified_end == item.position:
                segment.verified_end = item.position + item.size
            if item.result is None:
                _settle(item.done, None)  # ``append`` finishes the rest
            else:
                self._durable(item)

    async def _write_and_sync(self, runs: Runs, batch: list[_PendingWrite]) -> bool:
        """fsync=batch without the shared rounds: the writes and the fsync that covers them in one executor job,
        not two. Every append queued while the job runs waits for the next one, so an fsync is still shared by
        all the appends that queued up during the previous one (``_group_commit`` finds its write already
        durable). False (the batch's appends failed with the error) when the write or the fsync failed."""
        segments = _held_segments(runs)
        try:
            synced_in = await self._run(write_runs_and_flush, runs, segments)
        except FlushFailed as failed:
            self._batch_failed(batch, failed.__cause__ or failed, "log fsync failed")
            return False
        except BaseException as exc:
            self._batch_failed(batch, exc, "log write failed")
            return False
        finally:
            for segment in segments:
                segment.end_read()
        if segments:
            self.observer.on_fsync(synced_in)
        self._synced_seq = max(self._synced_seq, batch[-1].seq)
        return True

    def _durable(self, item: _PendingWrite) -> None:
        """An ``append_now`` write is durable (under fsync=batch its round synced it, under never it is written):
        what ``append`` does after its write, done here."""
        self.observer.on_append(time.perf_counter() - item.started, item.size)
        self._advance_high_watermark(item.end)
        if not item.done.done():  # (cancelled by whoever awaited it: the offsets are published all the same)
            item.done.resolve_promptly(item.result)  # (a handler driven without a Task answers in this callback)

    def _record_failure(self, exc: BaseException, what: str) -> None:
        if self._failure is None:
            self._failure = exc
            self._failed_at = time.monotonic()
            _log.error(f"{what}; appends are refused until the disk takes writes again", partition=self.name,
                       error=str(exc))
            hook = getattr(self.observer, "on_write_failed", None)
            if hook is not None:
                hook(self.name, exc)

    @property
    def write_failure(self) -> BaseException | None:
        """The failed write this log is waiting to retry, if any (health checks and metrics read it)."""
        return self._failure

    async def _retry_after_failure(self) -> None:
        """Heal a log whose write failed (ENOSPC, EIO): once the back-off has passed, the tail past the
        recovery point is read again exactly as after a crash — a torn or unwritten tail is cut, offsets
        that were never acknowledged are given out again — and appends go on. Called under the append lock.
        If the disk still refuses, the append that follows fails and the back-off starts over."""
        if self._failure is None or self._closed or self.corruption is not None:
            return
        if time.monotonic() - self._failed_at < self.write_retry_backoff_s or self.maintenance_lock.locked():
            return  # (the cleaner or retention is replacing segments: retry on a later append)
        async with self.maintenance_lock:
            await self._heal()

    async def _heal(self) -> None:
        await self._settle_writes()
        if self._sync_task is not None:
            await asyncio.gather(asyncio.shield(self._sync_task), return_exceptions=True)
        old = self.segments
        try:
            recovered = await self._run(self._recover_tail)
        except OSError as exc:
            self._failed_at = time.monotonic()
            _log.warning("log still not writable", partition=self.name, error=str(exc))
            return
        for segment in old:
            segment.mark_deleted()
        failure, self._failure = self._failure, None
        self.segments = recovered.segments
        self.log_start_offset = self.segments[0].base_offset
        self.log_end_offset = self.active_segment.next_offset
        self.high_watermark = self.log_end_offset
        self._written_seq = self._synced_seq = self._reserved_seq
        _log.warning("log takes appends again after a failed write; its tail was re-checked", partition=self.name,
                     failure=str(failure), log_end_offset=self.log_end_offset)
        hook = getattr(self.observer, "on_write_recovered", None)
        if hook is not None:
            hook(self.name)

    def _recover_tail(self):
        return recover_segments(self.directory, self.name, self.config, recovery_point=self.recovery_point,
                                files=self.files)

    async def _settle_writes(self) -> None:
        """Wait for every queued write (callers hold the append lock, so no new ones arrive)."""
        writer = self._writer
        if writer is not None:
            await asyncio.shield(writer)

    async def _roll(self, base_offset: int) -> Segment:
        await self._settle_writes()
        old = self.active_segment
        durable = self.fsync is not FsyncPolicy.NEVER

        def job() -> Segment:
            if durable:
                old.flush()
            old.write_indexes()
            new = Segment.create(self.directory, base_offset, self.files)
            if durable:
                fsync_directory(self.directory)
                write_recovery_point(self.directory, base_offset)
            return new

        new = await self._run(job)
        self.segments.append(new)
        old.forget_recent_batches()
        if durable:
            self.recovery_point = max(self.recovery_point, base_offset)
        return new

    async def checkpoint(self) -> int:
        """Make everything appended so far durable with its indexes; returns the new recovery point.

        Kafka's periodic flush plus recovery-point checkpoint: the active segment is fsynced and its index
        files written from a snapshot taken under the append lock, so the indexes only describe fsynced
        bytes. A restart after a crash then re-checks only what was appended after this call. Cheap when
        nothing was appended since the last one.
        """
        async with self._append_lock:
            if self._closed or self.corruption is not None or self.log_end_offset <= self.recovery_point:
                return self.recovery_point
            await self._settle_writes()
            if self._failure is not None:
                return self.recovery_point
            end = self.log_end_offset
            segment = self.active_segment
            snapshot = segment.index_snapshot()
            # Every segment holding data past the old recovery point: with fsync=never those rolled since the
            # last checkpoint were never fsynced (Kafka's flush(offset) covers [recoveryPoint, offset) too).
            unflushed = [s for s in self.segments if s.next_offset > self.recovery_point and not s.deleted]

            def job() -> None:
                for each in unflushed:
                    if not each.deleted:  # a segment the cleaner replaced meanwhile was fsynced as it was written
                        each.flush()
                segment.write_index_snapshot(snapshot)
                fsync_directory(self.directory)

            for each in unflushed:
                each.begin_read()
            try:
                await self._run(job)
            finally:
                for each in unflushed:
                    each.end_read()
            segment.indexes_dirty = False
            self.recovery_point = max(self.recovery_point, end)
            return self.recovery_point

    async def roll(self) -> None:
        """Start a new active segment now (so everything so far becomes cleanable)."""
        async with self._append_lock:
            self._check_open()
            if self.active_segment.size:
                await self._roll(self.log_end_offset)

    async def _fsync(self, segment: Segment) -> None:
        if segment.deleted:
            return  # closed (close() fsyncs every segment first) or removed: nothing left to flush
        started = time.perf_counter()
        segment.begin_read()  # keeps the descriptor open until the fsync is done
        try:
            await self._run(segment.flush)
        finally:
            segment.end_read()
        self.observer.on_fsync(time.perf_counter() - started)

    async def _group_commit(self, seq: int) -> None:
        """Wait until an fsync that started after write ``seq`` completed has finished."""
        while self._synced_seq < seq:
            task = self._sync_task
            if task is None:
                task = self._sync_task = asyncio.ensure_future(self._sync_once())
            await asyncio.shield(task)

    async def _sync_once(self) -> None:
        target = self._written_seq
        try:
            await self._fsync(self.active_segment)
            self._synced_seq = max(self._synced_seq, target)
        finally:
            self._sync_task = None

    def _advance_high_watermark(self, offset: int) -> None:
        if offset <= self.high_watermark:
            return
        self.high_watermark = offset
        for listener in tuple(self._listeners):
            try:
                listener(self)
            except Exception:
                _log.exception("append listener failed", partition=self.name)

    # ---- reading -----------------------------------------------------------------------
    def segment_for(self, offset: int) -> int:
        return max(bisect_right(self.segments, offset, key=_BASE_OFFSET) - 1, 0)

    async def read(self, offset: int, max_bytes: int, *, min_one: bool = True, max_offset: int | None = None,
                   view: bool = False, region: bool = False) -> bytes | memoryview | FileRegion:
        """Whole raw batches starting at the batch holding ``offset``, below the high watermark (and below
        ``max_offset`` when given: a read_committed fetch stops at the last stable offset).

        At most ``max_bytes`` unless ``min_one`` and the first batch alone is larger, in
        which case that batch is returned whole (as Kafka does for the first partition
        of a fetch). Offsets below the log start read from the log start. With ``view`` the answer may be a
        read-only memoryview instead of bytes (a fetch hands it to the socket uncopied); with ``region`` a
        ``FileRegion`` of the segment file (segment_reads.read_region: a fetch on a connection that sends it
        with ``sendfile``), or the bytes when the batches are few or not yet checked.
        """
        return await self.read_to(offset, max_bytes, self.read_bound(max_offset), min_one=min_one, view=view,
                                  region=region)

    async def read_to(self, offset: int, max_bytes: int, high_watermark: int, *, min_one: bool = True,
                      view: bool = False, region: bool = False) -> bytes | memoryview | FileRegion:
        """``read`` below a bound already taken (``read_bound``: a fetch answers with the high watermark it read
        by): planned, run, planned again if its segment was deleted meanwhile, and on in the next segment if
        its own held nothing for it."""
        while True:
            planned = self.plan_read(offset, max_bytes, high_watermark, view=view, region=region)
            if planned is None:
                return b""
            data = await self.run_planned(planned, max_bytes, min_one)
            if data is READ_ON:
                offset = planned.resume_offset
            elif data is not READ_AGAIN:
                return data

    def read_bound(self, max_offset: int | None = None) -> int:
        """(loop) Where a read stops: the high watermark, or ``max_offset`` below it. Raises the log's corruption
        when it is offline."""
        self._check_open()
        if self.corruption is not None:
            raise self.corruption
        return self.high_watermark if max_offset is None else min(self.high_watermark, max_offset)

    def plan_read(self, offset: int, max_bytes: int, high_watermark: int, *, view: bool = False,
                  region: bool = False) -> PlannedRead | None:
        """(loop) ``read``'s bounds in the segment holding ``offset`` (at least the log start) taken for a thread
        to read by (storage/planned_read.py), or None when nothing lies between it and ``high_watermark``
        (``read_bound``'s). The plan holds its segment until closed: ``run_planned`` closes it, as must whoever
        runs it otherwise."""
        offset = max(offset, self.log_start_offset)
        if offset >= high_watermark:
            return None
        segments = self.segments
        at = self.segment_for(offset)
        segment = segments[at]
        if segment.base_offset >= high_watermark:
            return None
        index = segment.offset_index
        start = segment.recent_batch_position(offset)
        if start is None:
            start = index.lookup(offset)
        # (the index and the recent batches are read here, on the loop that appends to them)
        walk_from = index.walk_start(start + max(max_bytes, 0), high_watermark) if region else 0
        following = segments[at + 1].base_offset if at + 1 < len(segments) else None
        resume = following if following is not None and following < high_watermark else None
        return PlannedRead(segment, offset, start, segment.size, walk_from, high_watermark, view, region, resume)

    async def run_planned(self, planned: PlannedRead, max_bytes: int,
                          min_one: bool) -> bytes | memoryview | FileRegion | object:
        """``planned`` run on an executor thread and closed; a corrupt batch found takes the log offline."""
        try:
            return await asyncio.get_running_loop().run_in_executor(None, planned.run, max_bytes, min_one)
        except CorruptLogError as exc:
            self.mark_corrupt(exc)
            raise
        finally:
            planned.close()

    async def offset_for_timestamp(self, ts: int) -> tuple[int, int, int] | None:
        """(offset, timestamp, leader epoch of its batch) of the first record whose timestamp is >= ``ts``."""
        self._check_open()
        high_watermark = self.high_watermark
        done: set[int] = set()
        restart = True
        while restart:
            restart = False
            for segment in list(self.segments):
                if segment.deleted:
                    restart = True  # the list changed under us: walk the new one
                    break
                if (id(segment) in done or segment.max_timestamp < ts
                        or segment.base_offset >= high_watermark):
                    continue
                before = segment.time_index.last_offset_before(ts)
                start = segment.offset_index.lookup(before) if before is not None else 0
                segment.begin_read()
                try:
                    found = await asyncio.get_running_loop().run_in_executor(
                        None, find_timestamp, segment, ts, start, segment.size, high_watermark,
                        self.log_start_offset)
                finally:
                    segment.end_read()
                if found is not None:
                    return found
                done.add(id(segment))
        return None

    async def batches(self, start_offset: int = 0) -> AsyncIterator[tuple[BatchHeader, bytes]]:
        """Every batch from the one holding ``start_offset`` up to the high watermark, for replay."""
        offset = start_offset
        while True:
            data = await self.read(offset, REPLAY_CHUNK, min_one=True)
            if not data:
                return
            progressed = False
            for pos, header in iter_batches(data, verify=False):
                if header.base_offset + header.last_offset_delta < offset:
                    continue
                yield header, data[pos:pos + header.size]
                offset = header.base_offset + header.last_offset_delta + 1
                progressed = True
            if not progressed:
                return

    def stable_offset(self) -> int:
        """The last stable offset as the cleaner must respect it: the high watermark without transactions;
        the log start (nothing is cleanable) while the producer state saying which are open is unknown."""
        if self.first_unstable_offset is None:
            return self.high_watermark
        try:
            first = self.first_unstable_offset()
        except LookupError:
            return self.log_start_offset
        return self.high_watermark if first is None else min(first, self.high_watermark)

    # ---- the transaction index ---------------------------------------------------------------
    async def add_aborted_txn(self, entry: AbortedTxn) -> None:
        """Record an aborted transaction in the ``.txnindex`` of the segment holding its ABORT marker and
        persist it (with fsync unless the policy is never); a second call for the same marker does nothing,
        so the producer-state replay may re-add what recovery lost."""
        segment = self.segments[self.segment_for(entry.last_offset)]
        if segment.deleted or not segment.add_aborted_txn(entry):
            return
        await self._run(segment.write_txn_index, self.fsync is not FsyncPolicy.NEVER)

    def collect_aborted_txns(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Kafka's collectAbortedTransactions: every aborted transaction still open at ``start_offset`` that
        began before ``upper_bound_offset``, from the segment holding ``start_offset`` on (an abort marker
        lies at or after its data, so earlier segments cannot hold one that matters). Every later segment is
        looked at, not only up to the first marker past the bound as Kafka's search stops: a transaction begun
        before the bound may be aborted after a later-begun one (the indexes are in memory, so this is cheap)."""
        found: list[AbortedTxn] = []
        for segment in self.segments[self.segment_for(start_offset):]:
            if segment.txn_index.entries:
                found.extend(segment.txn_index.collect(start_offset, upper_bound_offset))
        return found

    # ---- segment replacement (retention and cleaner) ---------------------------------------
    async def delete_segments(self, doomed: list[Segment], reason: str) -> None:
        """Drop whole non-active segments from the front or middle and advance the log start."""
        doomed = [segment for segment in doomed if segment is not self.active_segment and segment in self.segments]
        if not doomed:
            return
        self.segments = [segment for segment in self.segments if segment not in doomed]
        self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)
        for segment in doomed:
            segment.mark_deleted()
        await self._run(_delete_segment_files, doomed, self.directory)
        _log.info("deleted segments", partition=self.name, reason=reason,
                  segments=[segment.log_path.name for segment in doomed], log_start_offset=self.log_start_offset)

    async def advance_log_start_offset(self, offset: int) -> int:
        """DeleteRecords: records below ``offset`` are no longer readable (the start never moves back, nor
        past the high watermark — the caller checks that), and whole segments below it are deleted, as
        Kafka's deleteLogStartOffsetBreachedSegments does. Returns the new log start offset."""
        async with self.maintenance_lock:
            self._check_open()
            self.log_start_offset = max(self.log_start_offset, min(offset, self.high_watermark))
            doomed = [segment for segment, following in zip(self.segments, self.segments[1:])
                      if following.base_offset <= self.log_start_offset]
            await self.delete_segments(doomed, "log start offset breach")
            return self.log_start_offset

    def restore_log_start_offset(self, offset: int) -> None:
        """At open: the start a DeleteRecords left (from the checkpoint), if it lies inside this log."""
        if self.log_start_offset < offset <= self.log_end_offset:
            self.log_start_offset = offset

    def replace_segments(self, old: list[Segment], new: Segment) -> None:
        """Swap a contiguous run of segments for their rewritten replacement (loop side)."""
        first = self.segments.index(old[0])
        if self.segments[first:first + len(old)] != old:
            raise RuntimeError(f"segments to replace in {self.name} are no longer contiguous")
        self.segments[first:first + len(old)] = [new]
        for segment in old:
            segment.mark_deleted()

    async def run_in_executor(self, fn: Callable, *args: object):
        return await self._run(fn, *args)

    # ---- truncation, close, delete ---------------------------------------------------------
    async def truncate_fully(self, new_start_offset: int = 0) -> None:
        """Discard every record and restart the log empty at ``new_start_offset``."""
        async with self.maintenance_lock, self._append_lock:
            self._check_open()
            await self._settle_writes()
            old = self.segments
            for segment in old:
                segment.mark_deleted()

            def job() -> Segment:
                _delete_segment_files(old, self.directory)
                segment = Segment.create(self.directory, new_start_offset, self.files)
                write_recovery_point(self.directory, new_start_offset)
                return segment

            self.segments = [await self._run(job)]
            self.recovery_point = new_start_offset
            self.log_start_offset = self.log_end_offset = self.high_watermark = new_start_offset
            self._synced_seq = self._written_seq

    async def flush(self) -> None:
        await self._fsync(self.active_segment)

    async def close(self) -> None:
        """Flush, persist indexes and leave the clean-shutdown marker so reopening skips CRC checks."""
        if self._closed:
            return
        async with self.maintenance_lock, self._append_lock:
            self._closed = True
            await self._settle_writes()
            await self._run(self._close_cleanly)
        self._shutdown_executor()

    def _close_cleanly(self) -> None:
        try:
            for segment in self.segments:
                segment.flush()
            try:
                for segment in self.segments:
                    if segment.indexes_dirty:
                        segment.write_indexes()
                write_clean_shutdown_marker(self.directory)
            except OSError as exc:
                # A full disk: the data is flushed, only the shortcut for the next start is missing, so that
                # start recovers this log as after a crash instead of this shutdown failing.
                _log.error("could not write indexes or the clean-shutdown marker; the next start recovers "
                           "this log", partition=self.name, error=str(exc))
            else:
                self.recovery_point = self.log_end_offset
        finally:
            self._close_files()

    def _close_files(self) -> None:
        for segment in self.segments:
            segment.mark_deleted()

    async def delete(self) -> None:
        """Close without a marker and remove the partition directory."""
        if not self._closed:
            async with self.maintenance_lock, self._append_lock:
                self._closed = True
                await self._settle_writes()
        self._close_files()
        await self._run(shutil.rmtree, self.directory, True)
        self._shutdown_executor()

    def _shutdown_executor(self) -> None:
        if self._owns_executor:
            self._executor.shutdown(wait=False)

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError(f"log {self.name} is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if self._failure is not None:
            raise LogClosedError(f"log {self.name} failed on an earlier write: {self._failure}")
        if self.corruption is not None:
            raise LogClosedError(f"log {self.name} is offline: {self.corruption}")

    async def _run(self, fn: Callable, *args: object):
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


@dataclass(slots=True)
class _PendingWrite:
    """Bytes reserved at a position of the active segment, written by the next write round."""
    segment: Segment
    position: int
    data: bytearray
    seq: int
    done: asyncio.Future[None]
    tail: memoryview | None  # written right after ``data``: the uncopied rest of one large batch
    size: int                # bytes in all
    result: AppendResult | None  # ``append_now``'s answer, given once durable; None: ``append`` awaits ``done``
    end: int                 # the log end offset after this write
    started: float           # perf_counter() when the append began (the observer's append time)


# Enum members read on every append, as module globals: an Enum class attribute is read through EnumType's lookup
# hook (~0.5 µs on CPython 3.11), a global is cached by the interpreter.
_ALWAYS: Final = FsyncPolicy.ALWAYS
_BATCH: Final = FsyncPolicy.BATCH
_LOG_APPEND_TIME: Final = TimestampType.LOG_APPEND_TIME

_STAMPED_PREFIX: Final = PARTITION_LEADER_EPOCH_OFFSET + 4
"""The part of a batch append stamps (base offset, length, leader epoch); the CRC covers none of it."""
_SHARED_TAIL_MIN: Final = 16 * 1024
"""Batches from this size are appended without copying their (immutable) bytes past the stamped prefix."""


def _runs_of(batch: list[_PendingWrite]) -> Runs:
    """The writes of queued appends, adjacent ones merged into one run (one pwrite or pwritev)."""
    runs: Runs = []
    run_end = -1  # where the last run ends (summing its buffers per item was quadratic)
    for item in batch:
        last = runs[-1] if runs else None
        if last is not None and last[0] is item.segment and run_end == item.position:
            last[2].append(item.data)
        else:
            runs.append((item.segment, item.position, [item.data]))
        if item.tail is not None:
            runs[-1][2].append(item.tail)
        run_end = item.position + item.size
    return runs


def _held_segments(runs: Runs) -> list[Segment]:
    """The segments ``runs`` write to (each once, deleted ones left out), held open (begin_read) for their fsync:
    the caller ends the hold."""
    segments: list[Segment] = []
    for segment, _, _ in runs:
        if not segment.deleted and segment not in segments:
            segments.append(segment)
    for segment in segments:
        segment.begin_read()
    return segments


def _result(first_offset: int, next_offset: int, log_append_time: int | None,
            headers: list[tuple[int, BatchHeader]]) -> AppendResult:
    if len(headers) == 1:
        max_timestamp = headers[0][1].max_timestamp
    else:
        max_timestamp = max(header.max_timestamp for _, header in headers)
    return AppendResult(first_offset, next_offset - 1, -1 if log_append_time is None else log_append_time,
                        max_timestamp)


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    """Complete a write's future unless its append was cancelled meanwhile (the bytes stay written)."""
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def _delete_segment_files(segments: list[Segment], directory: Path) -> None:
    for segment in segments:
        segment.delete_files()
    fsync_directory(directory)
