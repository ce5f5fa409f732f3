"""LogManager: every partition log under one data directory, plus the background cleaner
and retention loops.

Each partition directory keeps its topic config in ``topic-config.json`` (Kafka config
names), so a topic comes back after a restart with the settings it was created with.
Deleted topics are renamed to ``<topic>-<partition>.<uuid>-delete`` first (as Kafka does)
so a crash half-way never resurrects them.

Segment files are opened through one bounded ``FilePool`` (``log.max.open.files``), so the number of
partitions is not limited by ``ulimit -n``. Every log's recovery point is kept in the data directory's
``recovery-point-offset-checkpoint``, written after periodic flushes and at a clean shutdown, so a restart
after a crash re-checks only what was appended since. A log whose read finds a batch failing its CRC is
taken offline (``refused``), like one whose recovery found mid-log corruption.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import uuid
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from functools import cached_property
from typing import TYPE_CHECKING, Final

import structlog

from groupcoord.storage.cleaner_checkpoint import CleanerCheckpoint
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.file_pool import FilePool
from groupcoord.storage.group_commit import SYNCFS_MIN_FILES, GroupCommit
from groupcoord.storage.write_rounds import WriteRounds
from groupcoord.storage.log import PartitionLog, parse_partition_dir
from groupcoord.storage.observer import NULL_OBSERVER, StorageObserver
from groupcoord.storage.log_start_checkpoint import LogStartOffsetCheckpoint
from groupcoord.storage.recovery_checkpoint import RecoveryPointCheckpoint
from groupcoord.storage.retention import apply_retention
from groupcoord.storage.throttle import Throttler

if TYPE_CHECKING:
    from groupcoord.storage.cleaner import CleanerStats, LogCleaner

TOPIC_CONFIG_FILE: Final = "topic-config.json"
DELETE_SUFFIX: Final = "-delete"

_log = structlog.get_logger("groupcoord.storage.log_manager")

IO_THREADS: Final = 4
"""Threads of the storage executor every log writes and fsyncs through (fsync=batch: one write-and-fdatasync
job per partition and group of appends). 16 threads were tried (branch commit5): on a busy machine the daemon's
CPU per OffsetCommit at fsync=batch fell from a median of 47.8 to 40.4 µs over 10 alternated pairs, because with 4
the jobs of ~50 ``__consumer_offsets`` partitions queued and the event loop was woken more often per commit. On
the quiet machine the gain was within the noise (bench.server_cpu, alternated: 46.0 and 36.5 µs with 16 against
46.1 and 43.0 with 4), and every thread that allocates gets a malloc arena of its own: RSS holding 10,000 groups x
100 committed offsets (bench.memory_bench) was 493 and 460 MiB with 16 threads, 457 and 461 with 8, 445 and 439
with 4, against issue 13's 500 MB. 4 it is."""


class LogManager:
    def __init__(self, data_dir: Path, fsync: FsyncPolicy, default_config: LogConfig, *,
                 executor: Executor | None = None, observer: StorageObserver | None = None,
                 cleaner_backoff_s: float = 15.0, retention_check_interval_s: float = 300.0,
                 cleaner_io_bytes_per_second: float = math.inf, io_threads: int = IO_THREADS,
                 max_open_files: int = 0, flush_checkpoint_interval_s: float = 60.0,
                 syncfs_min_files: int = SYNCFS_MIN_FILES) -> None:
        self.data_dir = Path(data_dir)
        self.files = FilePool(max_open_files)
        """Every segment file of every partition is opened through this bounded LRU (0: automatic cap)."""
        self.recovery_checkpoint = RecoveryPointCheckpoint(self.data_dir)
        self.flush_checkpoint_interval_s = flush_checkpoint_interval_s
        self._recovery_points: dict[tuple[str, int], int] | None = None
        self.log_start_checkpoint = LogStartOffsetCheckpoint(self.data_dir)
        self._log_starts: dict[tuple[str, int], int] | None = None
        self._checkpointed: dict[tuple[str, int], int] = {}
        self.fsync = fsync
        self.default_config = default_config
        self.observer = observer or NULL_OBSERVER
        self._cleaner_io_bytes_per_second = cleaner_io_bytes_per_second
        self._cleaner_checkpoint = CleanerCheckpoint(self.data_dir)
        self._cleaner_first_dirty = self._cleaner_checkpoint.read()  # at start, as ever: an unreadable file is said now
        self.cleaner_backoff_s = cleaner_backoff_s
        self.retention_check_interval_s = retention_check_interval_s
        self._owns_executor = executor is None
        self._executor = executor or ThreadPoolExecutor(max_workers=io_threads, thread_name_prefix="storage-io")
        self.group_commit = (GroupCommit(self.data_dir, self._executor, syncfs_min_files=syncfs_min_files)
                             if fsync is FsyncPolicy.BATCH else None)
        """fsync=batch: one write-and-sync round for every log with appends ready in a loop turn (group_commit)."""
        self.write_rounds = WriteRounds(self._executor) if fsync is not FsyncPolicy.BATCH else None
        """Any other policy: one write job for every log with appends ready in a loop turn (write_rounds)."""
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self._creating: dict[tuple[str, int], asyncio.Future[PartitionLog]] = {}
        self.refused: dict[tuple[str, int], CorruptLogError] = {}
        """Partitions whose log is corrupt in the middle: offline until an operator repairs them."""
        self._offline: list[PartitionLog] = []
        self._tasks: list[asyncio.Task[None]] = []

    @cached_property
    def cleaner(self) -> LogCleaner:
        """The compactor, made (and its module imported: ~1.5 % of the daemon's start-up) by the first pass, which
        the background loop starts after the broker listens, or by a topic's deletion; from the checkpoint read
        when this manager was made."""
        from groupcoord.storage.cleaner import LogCleaner

        return LogCleaner(Throttler(self._cleaner_io_bytes_per_second), checkpoint=self._cleaner_checkpoint,
                          first_dirty=self._cleaner_first_dirty)

    @property
    def logs(self) -> dict[tuple[str, int], PartitionLog]:
        return dict(self._logs)

    def topics(self) -> set[str]:
        return {topic for topic, _ in self._logs}

    def partitions(self, topic: str) -> list[PartitionLog]:
        """Open logs of ``topic`` in partition order."""
        return sorted((log for (t, _), log in self._logs.items() if t == topic), key=lambda log: log.partition)

    async def open_existing(self) -> dict[tuple[str, int], PartitionLog]:
        """Open every ``<topic>-<partition>`` directory, finishing interrupted topic deletions."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        for entry in sorted(os.listdir(self.data_dir)):
            path = self.data_dir / entry
            if not path.is_dir():
                continue
            if entry.endswith(DELETE_SUFFIX):
                await loop.run_in_executor(self._executor, shutil.rmtree, path, True)
                continue
            parsed = parse_partition_dir(entry)
            if parsed is None or parsed in self._logs:
                continue
            config = await loop.run_in_executor(self._executor, self._load_config, path)
            try:
                self._logs[parsed] = await self._open(path, parsed, config)
            except CorruptLogError as exc:
                # Only this partition goes offline: its files stay as they are for `groupcoord log verify`
                # and an operator, and every other partition is served.
                self.refused[parsed] = exc
                _log.error("partition offline: its log is corrupt in the middle and is left untouched",
                           partition=entry, error=str(exc))
        return self.logs

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    async def get_or_create(self, topic: str, partition: int, config: LogConfig | None = None) -> PartitionLog:
        """The open log, else open it from disk (keeping its persisted config), else create it with ``config``."""
        key = (topic, partition)
        existing = self._logs.get(key)
        if existing is not None:
            return existing
        if key in self.refused:
            raise self.refused[key]
        pending = self._creating.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[PartitionLog] = asyncio.get_running_loop().create_future()
        self._creating[key] = future
        try:
            log = await self._create(topic, partition, config or self.default_config)
            self._logs[key] = log
            future.set_result(log)
            return log
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters get it, nobody else must log it
            raise
        finally:
            del self._creating[key]

    async def _create(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        if not topic or "/" in topic or topic in (".", ".."):
            raise ValueError(f"invalid topic name {topic!r}")
        path = self.data_dir / f"{topic}-{partition}"
        loop = asyncio.get_running_loop()
        if path.exists():
            config = await loop.run_in_executor(self._executor, self._load_config, path)
        else:
            await loop.run_in_executor(self._executor, self._store_config, path, config)
        return await self._open(path, (topic, partition), config)

    async def _open(self, path: Path, key: tuple[str, int], config: LogConfig) -> PartitionLog:
        points = await self._known_recovery_points()
        log = await PartitionLog.open(path, config, self.fsync, executor=self._executor, observer=self.observer,
                                      files=self.files, recovery_point=points.get(key, 0),
                                      group_commit=self._group_commit_for(path), write_rounds=self.write_rounds)
        log.add_corruption_listener(self._take_offline)
        starts = await self._known_log_starts()
        if key in starts:
            log.restore_log_start_offset(starts[key])
        return log

    def _group_commit_for(self, path: Path) -> GroupCommit | None:
        if self.group_commit is None or not self.group_commit.covers(path):
            return None
        return self.group_commit

    async def _known_log_starts(self) -> dict[tuple[str, int], int]:
        if self._log_starts is None:
            self._log_starts = await asyncio.get_running_loop().run_in_executor(
                self._executor, self.log_start_checkpoint.read)
        return self._log_starts

    # ---- log start offsets (DeleteRecords) ----------------------------------------------------
    async def delete_records(self, topic: str, partition: int, offset: int) -> int:
        """Move the partition's log start offset to ``offset`` and make it durable before returning it."""
        log = self._logs[(topic, partition)]
        start = await log.advance_log_start_offset(offset)
        starts = await self._known_log_starts()
        if starts.get((topic, partition)) != start:
            starts[(topic, partition)] = start
            await self._write_log_starts()
        return start

    async def _write_log_starts(self) -> None:
        starts = await self._known_log_starts()
        live = {key: value for key, value in starts.items() if key in self._logs or key in self.refused}
        self._log_starts = live
        await asyncio.get_running_loop().run_in_executor(self._executor, self.log_start_checkpoint.write, live)

    async def _known_recovery_points(self) -> dict[tuple[str, int], int]:
        """The checkpoint as it was at start-up (read once: later writes come from the open logs)."""
        if self._recovery_points is None:
            self._recovery_points = await asyncio.get_running_loop().run_in_executor(
                self._executor, self.recovery_checkpoint.read)
            self._checkpointed = dict(self._recovery_points)
        return self._recovery_points

    def _take_offline(self, log: PartitionLog, exc: CorruptLogError) -> None:
        """A read found a corrupt batch: the partition answers KAFKA_STORAGE_ERROR (its groups
        COORDINATOR_NOT_AVAILABLE) from now on; its files stay as they are for an operator."""
        key = (log.topic, log.partition)
        if self._logs.get(key) is log:
            del self._logs[key]
            self._offline.append(log)
        self.refused[key] = exc

    def _still_on_disk(self, keys: list[tuple[str, int]]) -> list[tuple[str, int]]:
        return [key for key in keys if (self.data_dir / f"{key[0]}-{key[1]}").is_dir()]

    # ---- recovery points ---------------------------------------------------------------------
    async def checkpoint_recovery_points(self) -> bool:
        """Flush every log appended to since the last checkpoint, then rewrite the checkpoint file if any
        recovery point moved (Kafka's flush scheduler and checkpointLogRecoveryOffsets). True if written."""
        for log in list(self._logs.values()):
            if log.log_end_offset > log.recovery_point:
                try:
                    await log.checkpoint()
                except Exception:
                    _log.exception("flushing a log for the recovery checkpoint failed", partition=log.name)
        return await self._write_recovery_checkpoint()

    async def _write_recovery_checkpoint(self) -> bool:
        known = await self._known_recovery_points()
        # Partitions on disk but not open here (offline ones, or a manager that opened only some) keep the
        # entry they had: an operator's repair should not cost a full recovery. Deleted topics lose theirs.
        loop = asyncio.get_running_loop()
        kept = await loop.run_in_executor(self._executor, self._still_on_disk,
                                          [key for key in known if key not in self._logs])
        points = {key: self._checkpointed.get(key, known[key]) for key in kept}
        points.update({key: log.recovery_point for key, log in self._logs.items()})
        if points == self._checkpointed:
            return False
        await asyncio.get_running_loop().run_in_executor(self._executor, self.recovery_checkpoint.write, points)
        self._checkpointed = points
        return True

    async def update_config(self, topic: str, config: LogConfig) -> None:
        """Apply and persist a new config to every partition of ``topic``."""
        loop = asyncio.get_running_loop()
        for log in self.partitions(topic):
            await loop.run_in_executor(self._executor, self._store_config, log.directory, config)
            log.config = config

    def _load_config(self, path: Path) -> LogConfig:
        try:
            stored = json.loads((path / TOPIC_CONFIG_FILE).read_text())
        except FileNotFoundError:
            return self.default_config
        return LogConfig.from_topic_configs(stored, self.default_config)

    def _store_config(self, path: Path, config: LogConfig) -> None:
        path.mkdir(parents=True, exist_ok=True)
        tmp = path / (TOPIC_CONFIG_FILE + ".tmp")
        with open(tmp, "w") as handle:
            json.dump(config.to_topic_configs(), handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path / TOPIC_CONFIG_FILE)

    async def delete_topic(self, topic: str) -> None:
        loop = asyncio.get_running_loop()
        for log in self.partitions(topic):
            del self._logs[(log.topic, log.partition)]
            if self._recovery_points is not None:
                self._recovery_points.pop((log.topic, log.partition), None)
            if self._log_starts is not None and self._log_starts.pop((log.topic, log.partition), None) is not None:
                await self._write_log_starts()
            await self.cleaner.forget(log)
            await log.close()
            doomed = log.directory.with_name(f"{log.directory.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}")
            await loop.run_in_executor(self._executor, os.rename, log.directory, doomed)
            await loop.run_in_executor(self._executor, shutil.rmtree, doomed, True)
        _log.info("deleted topic", topic=topic)

    # ---- background maintenance ------------------------------------------------------------
    async def clean_now(self, topic: str | None = None) -> CleanerStats:
        """Compact every compacted log (of ``topic`` if given) regardless of its dirty ratio."""
        from groupcoord.storage.cleaner import CleanerStats

        total = CleanerStats()
        for (t, _), log in list(self._logs.items()):
            if topic is None or t == topic:
                try:
                    total.merge(await self.cleaner.clean(log))
                except CorruptLogError as exc:
                    log.mark_corrupt(exc)
                    raise
        return total

    async def retention_now(self) -> int:
        removed = 0
        for log in list(self._logs.values()):
            removed += await apply_retention(log)
        return removed

    async def start_background(self) -> None:
        if self._tasks:
            return
        self._tasks = [asyncio.create_task(self._cleaner_loop(), name="log-cleaner"),
                       asyncio.create_task(self._retention_loop(), name="log-retention"),
                       asyncio.create_task(self._checkpoint_loop(), name="log-recovery-checkpoint")]

    async def _checkpoint_loop(self) -> None:
        while True:
            await asyncio.sleep(self.flush_checkpoint_interval_s)
            try:
                await self.checkpoint_recovery_points()
            except Exception:
                _log.exception("writing the recovery point checkpoint failed")

    async def _cleaner_loop(self) -> None:
        while True:
            await asyncio.sleep(self.cleaner_backoff_s)
            await self.clean_filthiest()

    async def clean_filthiest(self) -> int:
        """One cleaner pass: clean the dirtiest eligible log, rank again, repeat (Kafka's cleaner thread).

        Each log is taken at most once a pass, so a log whose cleaning fails cannot spin the loop.
        Returns how many logs were cleaned.
        """
        tried: set[tuple[str, int]] = set()
        cleaned = 0
        while True:
            candidates = [log for key, log in self._logs.items() if key not in tried]
            try:
                target = self.cleaner.grab_filthiest(candidates)
            except Exception:
                _log.exception("ranking logs for cleaning failed")
                return cleaned
            if target is None:
                return cleaned
            log = target.log
            tried.add((log.topic, log.partition))
            try:
                cleaned += (await self.cleaner.clean(log)).partitions_cleaned
            except CorruptLogError as exc:
                log.mark_corrupt(exc)
            except Exception:
                _log.exception("log cleaning failed", partition=log.name)

    async def _retention_loop(self) -> None:
        while True:
            await asyncio.sleep(self.retention_check_interval_s)
            for log in list(self._logs.values()):
                try:
                    await apply_retention(log)
                except Exception:
                    _log.exception("retention failed", partition=log.name)

    async def stop(self) -> None:
        """The broker's shutdown step: stop the cleaner and retention loops, close every log."""
        await self.close()

    async def close(self) -> None:
        """Stop the loops and close every log cleanly (so the next open skips CRC validation)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # Side by side: each log's close is a few syncs (its segments' data, the clean-shutdown marker and its
        # directory) in the storage threads, ~1-5 ms each here, and a broker has 50 offsets partitions at
        # least; one after another that was 50-350 ms of every stop. Every log is closed even if one fails;
        # the first failure is raised once all are done (the checkpoint below is then not written: the next
        # start recovers more, it loses nothing).
        closing = list(self._logs.values()) + self._offline
        outcomes = await asyncio.gather(*(log.close() for log in closing), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        try:
            await self._write_recovery_checkpoint()
        except OSError as exc:  # e.g. a full disk: the next start recovers more, it loses nothing
            _log.error("could not write the recovery point checkpoint at shutdown", error=str(exc))
        self._logs.clear()
        self._offline.clear()
        if self.group_commit is not None:
            self.group_commit.close()
        if self._owns_executor:
            self._executor.shutdown(wait=True)
