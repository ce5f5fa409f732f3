"""fsync=batch across partitions: the appends of every log that are waiting in one event-loop turn are written
and made durable by one storage job, with one ``syncfs`` when they touch several files.

Why: each ``__consumer_offsets`` partition is a log of its own, so 64 groups committing at once dirty ~40 files.
One ``fdatasync`` per file costs each its own journal commit and disk-cache flush (about 70 µs of kernel CPU per
file on this ext4, run in as many storage-thread jobs, each a GIL hand-off and an event-loop wake-up to answer
it). ``syncfs`` makes every file of the filesystem durable with one journal commit and one flush: measured here,
8 files of 9.6 KiB cost 305 µs of process CPU against 733 µs in four threads of ``fdatasync`` (787 against 1,067 µs
of wall time), 40 files 284 against 969 µs. One file is faster alone (73 µs against 0.5–1 ms), so a round that
touches fewer than ``syncfs_min_files`` files keeps one ``fdatasync`` job per log, in parallel, as before.

The rule is a double-buffered group commit: at most two rounds are in flight (``ROUNDS_IN_FLIGHT``); appends
that arrive meanwhile wait for the next round, which then covers all of them. ``syncfs`` flushes whatever else is dirty on that filesystem too, so a
data directory sharing its filesystem with a heavy writer pays for that writer's pages: ``syncfs_min_files = 0``
turns it off (the ``log.flush.syncfs.min.partitions`` setting).

Durability is at least ``fdatasync``'s: Linux's ``syncfs`` writes back every dirty inode of the filesystem, commits
the journal and flushes the device cache, and (since 5.8) reports a writeback error seen on the filesystem since
the descriptor was opened. That error cannot be pinned to one file, so every log of the round records the
failure and re-checks its tail before taking appends again, as after a failed ``fdatasync``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import structlog

from groupcoord.storage.kept_loop import KeptLoop
from groupcoord.storage.prompt_future import run_due
from groupcoord.storage.segment import Segment

__all__ = ["SYNCFS_MIN_FILES", "FlushFailed", "GroupCommit", "RoundWriter", "Runs", "hand_over", "resolve_round_future",
           "submit_round", "syncfs_available", "write_runs", "write_runs_and_flush"]

Runs = list[tuple[Segment, int, list[bytearray | memoryview]]]
"""Writes of one log: (segment, file position, buffers written back to back there)."""

ROUNDS_IN_FLIGHT: Final = 2
"""Rounds being made durable at once; appends arriving while both are in flight wait and join the next. One (the
textbook group commit) made a synchronous client whose log was not in the round wait for someone else's syncfs:
a consume-transform-produce member's OffsetCommit waited behind the other members' Produce round. Measured
alternately (bench.ctp_bench --records 200000 --formed, busy machine, 5 runs each): median 1.08 s before the group
commit, 1.15 s with one round, 1.04 s with two. A log's own appends never ride in two rounds at once (its writer
awaits one before it drains more), so rounds in flight touch different logs."""
SYNCFS_MIN_FILES: Final = 3
"""A round touching this many files or more is made durable with one syncfs. Measured on this machine's ext4
(pwrite of 9.6 KiB per file, then durable; µs per round, 200 rounds): 1 file 228 wall / 107 process CPU with
fdatasync against 716 / 136 with syncfs; 2 files 376 / 225 against 430 / 165; 3 files 487 / 327 against
493 / 187; 8 files 1,067 / 733 against 787 / 305."""


_log = structlog.get_logger("groupcoord.storage.group_commit")


class FlushFailed(Exception):
    """The writes went through but the fsync after them failed (its OSError is the cause)."""


def write_runs(runs: Runs) -> None:
    for segment, position, buffers in runs:
        if len(buffers) == 1:
            segment.write_at(position, buffers[0])
        else:
            segment.write_parts_at(position, buffers)  # one pwritev: no join of the run into a copy


def write_runs_and_flush(runs: Runs, segments: Sequence[Segment]) -> float:
    """``write_runs``, then each written segment made durable; returns the seconds the fsyncs took."""
    write_runs(runs)
    started = time.perf_counter()
    try:
        for segment in segments:
            segment.flush()
    except OSError as exc:
        raise FlushFailed(str(exc)) from exc
    return time.perf_counter() - started


@functools.cache
def _libc_syncfs() -> Callable[[int], None] | None:
    """libc's syncfs (Linux) as a function that raises OSError, or None where there is none. Called through ctypes:
    CDLL releases the GIL for the call, so the event loop runs while the filesystem is flushed. Looked up on first
    use, among the symbols the process already has loaded (``CDLL(None)``: no library search, which would run
    ``ldconfig``), so that start-up pays nothing for it."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    get_errno = ctypes.get_errno

    def syncfs(fd: int) -> None:
        if fn(fd) != 0:
            errno = get_errno()
            raise OSError(errno, f"syncfs: {os.strerror(errno)}")

    return syncfs


def syncfs_available() -> bool:
    return _libc_syncfs() is not None


def _syncfs(fd: int) -> None:
    _libc_syncfs()(fd)  # type: ignore[misc]  # only called where syncfs_available()


class RoundWriter(Protocol):
    """A log whose queued writes join the next round without a coroutine (``GroupCommit.join``,
    ``WriteRounds.join``): the round takes them as it starts and hands the log the outcome as it ends."""

    def take_writes(self) -> tuple[Runs, list[Segment]] | None:
        """(the round starts) The log's queued writes and the segments to make durable, or None: none to write."""

    def round_done(self, outcome: BaseException | float | None) -> None:
        """(the round ended) The write's error, ``FlushFailed``, or (written and durable) the seconds the sync
        took (None from WriteRounds, which does not sync)."""


@dataclass(slots=True)
class _Waiting:
    """Writes waiting for the next round: the runs to write, the segments to sync, and who hears the outcome (the
    future a ``write_and_sync`` caller waits on, or the joined log's ``round_done``)."""
    runs: Runs
    segments: list[Segment]
    done: Callable[[BaseException | float], None]


class GroupCommit:
    """The fsync=batch write path shared by every log under one data directory (see the module docstring).

    ``write_and_sync`` is awaited with a log's writes; it returns the seconds the durable step took, or raises the
    write's error, or ``FlushFailed`` from the fsync's. ``join(log)`` is the same without a coroutine: the log's
    writes are taken as the next round starts, so every append queued until then rides in it."""

    def __init__(self, data_dir: Path, executor: Executor, *, syncfs_min_files: int = SYNCFS_MIN_FILES) -> None:
        self.data_dir = Path(data_dir)
        self.executor = executor
        self.syncfs_min_files = syncfs_min_files
        """0 (or no syncfs on this platform, found at the first round that would use it): an fdatasync each."""
        self._dir_fd: int | None = None
        self._data_dev: int | None = None
        self._waiting: list[_Waiting] = []
        self._joined: list[RoundWriter] = []
        self._rounds_in_flight = 0
        self._scheduled = False
        self._loop = KeptLoop()  # every log's appends ask for it: once, not a getpid() each (storage/kept_loop.py)
        self.rounds = 0
        """Rounds started (tests and the bench read these two)."""
        self.syncfs_rounds = 0

    def covers(self, directory: Path) -> bool:
        """Whether ``directory`` is on the data directory's filesystem, which is the one syncfs flushes (a
        partition directory that is a mount point of its own keeps its logs' own fdatasyncs)."""
        try:
            if self._data_dev is None:
                self._data_dev = os.stat(self.data_dir).st_dev
            return os.stat(directory).st_dev == self._data_dev
        except OSError:
            return False

    async def write_and_sync(self, runs: Runs, segments: list[Segment]) -> float:
        loop = self._loop()
        done: asyncio.Future[float] = loop.create_future()
        self._waiting.append(_Waiting(runs, segments, functools.partial(resolve_round_future, done)))
        self._schedule(loop)
        return await done

    def join(self, log: RoundWriter) -> None:
        """``log`` has writes queued: the next round takes them (``take_writes``) and tells it the outcome
        (``round_done``). A log joins again only after its round is done (its appends never ride two at once).

        Why: a log's writer Task per group of appends (its creation, steps, the coroutine awaiting this round)
        cost as much as the rest of an append's bookkeeping (bench.produce_instructions, produce15)."""
        self._joined.append(log)
        self._schedule(self._loop())

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._rounds_in_flight < ROUNDS_IN_FLIGHT and not self._scheduled:
            # Start at the end of this loop turn, so every log whose appends are ready now joins the round.
            self._scheduled = True
            loop.call_soon(self._start_round)

    def close(self) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None

    def _start_round(self) -> None:
        self._scheduled = False
        if self._rounds_in_flight >= ROUNDS_IN_FLIGHT:
            return
        waiting, self._waiting = self._waiting, []
        if self._joined:
            joined, self._joined = self._joined, []
            for log in joined:
                taken = log.take_writes()
                if taken is not None:
                    waiting.append(_Waiting(taken[0], taken[1], log.round_done))
        if not waiting:
            return
        self._rounds_in_flight += 1
        self.rounds += 1
        files = sum(len(item.segments) for item in waiting)  # each log names its own segments once
        loop = self._loop()
        try:
            if self.syncfs_min_files and files >= self.syncfs_min_files and syncfs_available():
                self.syncfs_rounds += 1
                submit_round(self.executor, loop, functools.partial(self._finish_round, waiting), len(waiting),
                             _write_all_and_syncfs, [item.runs for item in waiting], self._directory_fd())
                return
            job = asyncio.gather(*(loop.run_in_executor(self.executor, write_runs_and_flush, item.runs, item.segments)
                                   for item in waiting), return_exceptions=True)
        except BaseException as exc:  # noqa: BLE001 - e.g. the executor shut down: the round's logs hear it
            self._finish_round(waiting, [exc] * len(waiting))
            return
        job.add_done_callback(lambda done: self._finish_round(waiting, _outcomes(done, len(waiting))))

    def _directory_fd(self) -> int:
        """Opened once, on the event loop (two rounds in flight must not both open it)."""
        if self._dir_fd is None:
            self._dir_fd = os.open(self.data_dir, os.O_RDONLY)
        return self._dir_fd

    def _finish_round(self, waiting: list[_Waiting], outcomes: list[BaseException | float]) -> None:
        self._rounds_in_flight -= 1
        for item, outcome in zip(waiting, outcomes):
            hand_over(item.done, outcome)
        if self._waiting or self._joined:
            # At once: the logs just answered have joined again already (round_done), and a loop turn of a busy
            # broker is long: waiting for the next one before starting the round added that turn to every append.
            self._start_round()
        run_due()  # the handlers waiting on the round's appends answer now, not a loop turn later (prompt_future.py)


def hand_over(done: Callable[[BaseException | float | None], None], outcome: BaseException | float | None) -> None:
    """A round's outcome to one of its logs; a log failing to take it does not keep it from the others."""
    try:
        done(outcome)
    except Exception:  # noqa: BLE001
        _log.exception("a log failed to take its write round's outcome")


def resolve_round_future(done: asyncio.Future, outcome: BaseException | float | None) -> None:
    """A ``write``/``write_and_sync`` caller's future given the round's outcome for its log."""
    if done.done():
        return  # the caller was cancelled meanwhile
    if isinstance(outcome, BaseException):
        done.set_exception(outcome)
    else:
        done.set_result(outcome)


def write_every_log(all_runs: list[Runs]) -> list[BaseException | None]:
    """Every log's writes in one storage job, in the order they joined (a round's: here and in
    write_rounds.py); a failed one fails only its own log: its error, else None, per log."""
    errors: list[BaseException | None] = []
    for runs in all_runs:
        try:
            write_runs(runs)
        except BaseException as exc:  # noqa: BLE001 - handed to that log's append
            errors.append(exc)
        else:
            errors.append(None)
    return errors


def _write_all_and_syncfs(all_runs: list[Runs], dir_fd: int) -> list[BaseException | float]:
    """One job: every log's writes (a failed one fails only its log), then one syncfs for all of them. Each log's
    outcome: its write's error, ``FlushFailed`` from the syncfs, or the seconds the syncfs took."""
    errors = write_every_log(all_runs)
    if all(errors):
        return errors  # type: ignore[return-value]  # nothing written: nothing to sync
    started = time.perf_counter()
    try:
        _syncfs(dir_fd)
    except OSError as exc:
        failed = FlushFailed(str(exc))
        failed.__cause__ = exc
        return [error or failed for error in errors]
    took = time.perf_counter() - started
    return [error or took for error in errors]


def submit_round(executor: Executor, loop: asyncio.AbstractEventLoop, finish: Callable[[list[Any]], None],
                 logs: int, job: Callable[..., list[Any]], *args: Any) -> None:
    """(loop) A round's storage job, ``job(*args)`` (its outcome per log, in order), run on ``executor``; ``finish``
    is called on the loop with that list, or with the job's own failure for each of the ``logs``. Raises what
    ``executor.submit`` raises (a shut-down executor), for the caller to hand its logs.

    Why not ``run_in_executor``: its answer reaches the loop as a callback that resolves an asyncio future, whose
    done callback runs on the loop's next turn; a busy broker's turn is long (tens of milliseconds in franz-go's
    TestGroupETL), and every acknowledgement waited for that extra turn. Both round writers (this module's syncfs
    rounds, write_rounds.py) hand their outcomes back this way."""
    executor.submit(_run_then_call_back, loop, finish, logs, job, *args)


def _run_then_call_back(loop: asyncio.AbstractEventLoop, finish: Callable[[list[Any]], None], logs: int,
                        job: Callable[..., list[Any]], *args: Any) -> None:
    """(storage thread) ``submit_round``'s job, then its outcome handed to the loop in one callback."""
    try:
        outcomes = job(*args)
    except BaseException as exc:  # noqa: BLE001 - handed to every log of the round
        outcomes = [exc] * logs
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for this round any more
        loop.call_soon_threadsafe(finish, outcomes)


def _outcomes(job: asyncio.Future[list[BaseException | float]], count: int) -> list[BaseException | float]:
    """A round job's outcome per log; a job that failed as a whole (its executor shut down) fails every log."""
    try:
        return job.result()
    except BaseException as exc:  # noqa: BLE001
        return [exc] * count
