"""The async runtime around sans-I/O shards: logs, durability, timers, loading (Kafka's CoordinatorRuntime).

One shard per partition of the coordinator's topic (``__consumer_offsets`` for groups,
``__transaction_state`` for transactions), whose records the given codec reads and writes. An operation runs on its shard
synchronously (the event loop serialises a shard's events); the records it
produced are appended to the shard's partition by that shard's writer, and its
replies are released only once those records, and every earlier write of the
shard, are durable. If an append fails, the in-memory state may be ahead of the
log, so the shard reloads itself from the log (the log is the truth), answering
COORDINATOR_LOAD_IN_PROGRESS meanwhile.

The runtime knows shards only through ``CoordinatorShard``: what a shard does
with a record or a request is the business of the layers above.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections import deque
from functools import partial
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import structlog

from groupcoord.coordinator.clock import Clock
from groupcoord.coordinator.groups.runtime import snapshot as snapshots
from groupcoord.coordinator.groups.runtime.effects import Effects, EndMarker, TransactionalRecords
from groupcoord.coordinator.groups.runtime.snapshot import LatestRecords, SnapshotError, pack_latest
from groupcoord.coordinator.groups.runtime.wakeup import Wakeup
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import decode_key_values, decode_records, encode_batch, encode_plain_batch
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.config import LogConfig

_log = structlog.get_logger("groupcoord.groups")

MAX_BATCH_BYTES = 900_000  # stay below the offsets topic's max.message.bytes (1 MiB) per batch
APPENDS_IN_FLIGHT = 2  # one waiting for (or in) its fsync, the next turn's written meanwhile
LANE_JOIN_WINDOW_S = 0.02
"""How long lane commits join one queued Effects (one append for all of a loop turn's, however slow the turn): its
write timeout counts from the last to join, so the first may be answered with its timeout error up to this much
after its own deadline (20 ms of the default 5,000), and never later, even while a stalled write keeps the Effects
queued and commits keep coming."""

ErrorShape = Callable[[ErrorCode], dict]


class CoordinatorShard(Protocol):
    """What the runtime needs of a shard: its partition, its load cycle and its timers."""

    partition: int
    loading: bool
    unavailable: str | None
    log: Any

    def begin_load(self) -> None: ...

    def replay(self, key: Any, value: Any, now: int, producer_id: int = -1) -> None:
        """Apply one record; ``producer_id`` >= 0 for a record of a transactional batch (pending until its marker)."""

    # Optional: ``replay_raw(key: bytes, value: bytes | None, now: int) -> bool`` applies a plain record from
    # its bytes and says whether it did (GroupShard: offset commits); the runtime calls ``replay`` otherwise.
    # Optional: ``replay_plain_batch(records, start, now, latest, decode_record) -> int`` does for a whole plain
    # batch what the runtime's loop does per record (GroupShard); the runtime then calls it instead.

    def replay_end_transaction(self, producer_id: int, committed: bool, now: int) -> None:
        """Apply a transaction's end marker (the records of that producer's open transaction count, or vanish)."""

    def finish_load(self, now: int) -> None: ...

    def tick(self, now: int) -> Effects: ...

    # Optional: ``after_write(operation, now, error) -> Effects`` runs an operation an Effects asked to run once
    # its writes are durable or timed out (``Effects.after_write``); only a shard whose operations ask for one
    # needs it.

    def next_deadline(self) -> int | None: ...

    def group_count(self) -> int: ...


Operation = Callable[[Any, Any, int], Effects]  # (shard, reply token, now) -> Effects

_INLINE = object()  # the reply token of `run_inline`: the reply is picked out of the Effects, not resolved


class RecordCodec(Protocol):
    """The coordinator topic's key/value codec (a module such as ``offsets_records``)."""

    def encode_key(self, key: Any) -> bytes: ...

    def encode_value(self, value: Any) -> bytes | None: ...

    def decode_record(self, key: bytes, value: bytes | None) -> tuple[Any, Any]: ...


class _Parked:
    """The parked replies of a shard (a join waiting for the rest of the group, a follower's sync waiting
    for the leader's), each with how to answer it with an error if the shard stops or reloads first.

    A reply answered the ordinary way is not taken out when it is answered (that was a done-callback and a
    loop turn per parked request, a few per member in every rebalance): answered ones are dropped in one
    sweep whenever the table has doubled since the last, so it holds at most about twice the replies still
    parked (and never fewer than ``_SWEEP_FLOOR`` before a sweep), at an amortised cost of one ``done()``
    per reply. The floor is small: an answered reply still holds its request and answer until swept (a
    JoinGroup's, with every member's metadata for the leader), and a broker has a table per shard."""

    __slots__ = ("_replies", "_sweep_at")
    _SWEEP_FLOOR = 16

    def __init__(self) -> None:
        self._replies: dict[asyncio.Future, ErrorShape] = {}
        self._sweep_at = self._SWEEP_FLOOR

    def add(self, future: asyncio.Future, on_error: ErrorShape) -> None:
        replies = self._replies
        replies[future] = on_error
        if len(replies) >= self._sweep_at:
            self._replies = replies = {f: shape for f, shape in replies.items() if not f.done()}
            self._sweep_at = max(2 * len(replies), self._SWEEP_FLOOR)

    def fail_all(self, code: ErrorCode) -> None:
        """Answer every reply still parked with its error shape for ``code``, and forget them all."""
        replies, self._replies = self._replies, {}
        self._sweep_at = self._SWEEP_FLOOR
        for future, on_error in replies.items():
            if not future.done():
                future.set_result(on_error(code))

    def __len__(self) -> int:
        """Replies still parked (answered ones not swept yet are not counted)."""
        return sum(1 for future in self._replies if not future.done())


@dataclass
class _ShardRuntime:
    """The runtime's side of one shard: its log, queued operations, pending writes and replies, load state."""
    shard: CoordinatorShard
    log: Any = None
    queue: list[Effects] = field(default_factory=list)
    wakeup: Wakeup = field(default_factory=Wakeup)
    writer: asyncio.Task | None = None
    timer: asyncio.TimerHandle | None = None
    timer_deadline: int | None = None
    outstanding: _Parked = field(default_factory=_Parked)
    writing: bool = False
    latest: LatestRecords = field(default_factory=LatestRecords.empty)
    """The latest record of each key, with its offset: what the next snapshot writes down."""
    transactional: bool = False
    """The partition holds transactional records: its state depends on markers, so it is not snapshotted
    (it replays its whole log, as before snapshots; a snapshot taken before its first one stays valid)."""
    snapshotting: asyncio.Task | None = None
    verifying: asyncio.Task | None = None
    """The background CRC walk of the log below the snapshot a load started from."""
    last_load: tuple[int, int] = (0, 0)
    """Records the last load took from the snapshot and from the log."""
    inflight: "deque[tuple[asyncio.Future, list[Effects]]]" = field(default_factory=deque)
    """The appends under way (not durable yet), oldest first, with the Effects whose records each carries."""
    expiry: asyncio.TimerHandle | None = None
    """The write timeout's timer, armed while appends are under way."""
    lane_fx: Effects | None = None
    """The Effects `queue_lane_write` last queued: lane writes join it while it is still the queue's last."""
    lane_opened_at: float = 0.0
    """The loop's time when `lane_fx` was queued (with a write timeout): writes join it for `LANE_JOIN_WINDOW_S`."""


def _any_writes(queue: list[Effects]) -> bool:
    """Whether any queued Effects has records or batches to append (a loop, not ``any()`` over a generator: the
    write loop asks on every turn, and on CPython 3.11 a generator expression is a function object, a frame and a
    generator each time)."""
    for fx in queue:
        if fx.records or fx.batches:
            return True
    return False


def _writes_of(batch: list[Effects]) -> list:
    """Everything a turn's Effects append, in order. Most turns of a busy shard are one Effects of plain records (a
    group's record, a lane's commits): its records list is handed over as it is (nothing appends to an Effects
    once it is taken off the queue)."""
    if len(batch) == 1 and not batch[0].batches:
        return batch[0].records
    out: list = []
    for fx in batch:
        out.extend(fx.writes())
    return out


def fail_response(response: dict, code: ErrorCode) -> dict:
    """The same answer with every error field set to ``code`` (used when its write could not be made durable)."""
    out = dict(response)
    if "error_code" in out:
        out["error_code"] = code
    if isinstance(out.get("topics"), list):
        out["topics"] = [
            {**t, "partitions": [{**p, "error_code": code} for p in t.get("partitions", [])]} for t in out["topics"]
        ]
    return out


# CoordinatorRuntime._collector_paused: one count for the whole process (every runtime, every thread).
_collector_lock = threading.Lock()
_collector_pauses = 0
_collector_was_enabled = False


class CoordinatorRuntime:
    def __init__(self, shards: list[CoordinatorShard], config: Any, log_manager: Any, log_config: LogConfig,
                 clock: Clock, observer: Any, *, topic: str, codec: RecordCodec, compression: int = 0,
                 name: str = "groups", snapshots: bool = True, write_timeout_ms: int | None = None,
                 timeout_error: ErrorCode = ErrorCode.coordinator_not_available) -> None:
        """``write_timeout_ms``: Kafka's write-operation timeout (``offsets.commit.timeout.ms`` for the group
        coordinator): a reply still waiting for its records, or for an earlier write of the shard, to be
        durable that long is answered with ``timeout_error`` instead (Kafka's TimeoutException, which
        GroupCoordinatorService turns into COORDINATOR_NOT_AVAILABLE). The write itself goes on: if it
        becomes durable, state and log agree as they would have; if it fails, the shard reloads from the
        log as after any failed append. None: replies wait as long as the write takes."""
        self.write_timeout_s = None if write_timeout_ms is None or write_timeout_ms <= 0 else write_timeout_ms / 1000
        self.timeout_error = timeout_error
        self.topic = topic
        self.snapshots = snapshots
        """Whether the latest record of each key stands for the partition (a compacted topic's reading). Not so
        for ``__share_group_state``, whose ShareUpdate records of one key all count until the next ShareSnapshot."""
        self.codec = codec
        self.compression = compression
        self.name = name
        self.config = config
        self.log_manager = log_manager
        self.log_config = log_config
        self.clock = clock
        self.observer = observer
        self._runtimes = [_ShardRuntime(shard) for shard in shards]
        for rt in self._runtimes:
            rt.shard.begin_load()
        self._started = False
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop `start` ran on, kept: asyncio.get_running_loop() makes a getpid() system call each time (its
        fork check), and the request path asked for the loop a few times per commit (~2 % of the loop's time)."""

    def shard(self, partition: int) -> CoordinatorShard:
        return self._runtimes[partition].shard

    def shards(self) -> list[CoordinatorShard]:
        return [rt.shard for rt in self._runtimes]

    def last_load(self, partition: int) -> tuple[int, int]:
        """(records taken from the snapshot, records replayed from the log) by the partition's last load."""
        return self._runtimes[partition].last_load

    # ------------------------------------------------------------------ lifecycle

    @staticmethod
    @contextlib.contextmanager
    def _collector_paused():
        """Python's cyclic collector off while partitions load (restored after, however many loads of
        however many brokers of the process overlap). A load builds millions of long-lived objects without
        cycles (reference counting frees its garbage), and with the collector on, each older-generation
        pass walked everything built so far: a quarter of the CPU time of replaying a million offset
        commits (bench/replay_bench.py). Cycles made meanwhile elsewhere are collected once it is back on."""
        global _collector_pauses, _collector_was_enabled
        with _collector_lock:
            if _collector_pauses == 0:
                _collector_was_enabled = gc.isenabled()
                gc.disable()
            _collector_pauses += 1
        try:
            yield
        finally:
            with _collector_lock:
                _collector_pauses -= 1
                if _collector_pauses == 0 and _collector_was_enabled:
                    if gc.get_freeze_count() == 0:
                        # What the loads built goes straight to the oldest generation (freeze, then unfreeze:
                        # no object visited): else the first young pass after this walked all of it, a
                        # million stored offsets each time, 165 ms of bench/replay_bench.py's 2.9 s. Never
                        # when something is frozen already (the daemon's settled heap), which unfreeze
                        # would hand back to the collector.
                        gc.freeze()
                        gc.unfreeze()
                    gc.enable()

    async def start(self) -> None:
        """Open and replay every shard's partition; each shard serves as soon as it is loaded."""
        self._started = True
        self._loop = asyncio.get_running_loop()
        started = time.perf_counter()
        with self._collector_paused():
            await asyncio.gather(*(self._load_or_refuse(rt) for rt in self._runtimes))
        _log.info(
            "coordinator partitions loaded",
            topic=self.topic,
            partitions=len(self._runtimes),
            groups=sum(rt.shard.group_count() for rt in self._runtimes),
            seconds=round(time.perf_counter() - started, 4),
        )
        for rt in self._runtimes:
            rt.writer = asyncio.get_running_loop().create_task(self._write_loop(rt), name=f"{self.name}-writer-{rt.shard.partition}")

    async def stop(self) -> None:
        self._started = False
        for rt in self._runtimes:
            if rt.timer is not None:
                rt.timer.cancel()
                rt.timer = None
            rt.wakeup.set()
        writers = [rt.writer for rt in self._runtimes if rt.writer is not None]
        await asyncio.gather(*writers, return_exceptions=True)
        for rt in self._runtimes:
            if rt.verifying is not None:
                rt.verifying.cancel()
        await asyncio.gather(*(rt.verifying for rt in self._runtimes if rt.verifying is not None),
                             return_exceptions=True)
        # A clean stop leaves every loaded shard a snapshot at its log end: the next start replays nothing.
        await asyncio.gather(*(rt.snapshotting for rt in self._runtimes if rt.snapshotting is not None),
                             return_exceptions=True)
        await asyncio.gather(*(self._write_snapshot(rt) for rt in self._runtimes if self._may_snapshot(rt)
                               and rt.latest.since_snapshot), return_exceptions=True)
        for rt in self._runtimes:
            rt.writer = None
            rt.outstanding.fail_all(ErrorCode.coordinator_not_available)

    async def _load_or_refuse(self, rt: _ShardRuntime) -> None:
        """A partition that cannot be read or replayed takes only its own groups out of service, never the
        broker: they answer COORDINATOR_NOT_AVAILABLE, the log is left untouched for an operator (or
        `groupcoord log verify`) to look at, and the error says which partition and why."""
        try:
            await self._load(rt)
        except Exception as exc:
            rt.shard.unavailable = repr(exc)
            rt.shard.log.error("coordinator partition could not be loaded; what it owns answers COORDINATOR_NOT_AVAILABLE",
                               partition=f"{self.topic}-{rt.shard.partition}", error=repr(exc))

    async def _load(self, rt: _ShardRuntime) -> None:
        """Replay the shard's partition: from its snapshot and the log past it, else the whole log."""
        started = time.perf_counter()
        shard = rt.shard
        shard.begin_load()
        if rt.log is None:
            rt.log = await self.log_manager.get_or_create(self.topic, shard.partition, self.log_config)
            add_listener = getattr(rt.log, "add_corruption_listener", None)
            if add_listener is not None:
                add_listener(lambda _log, exc, rt=rt: self._on_corruption(rt, exc))
        now = self.clock.wall_ms()
        decode_record = self.codec.decode_record
        # the control-record codec (a transaction's end marker), with the first load, not at start-up
        from groupcoord.protocol.control_records import read_end_txn_marker

        rt.latest = LatestRecords.empty()
        rt.transactional = False
        start = await self._replay_snapshot(rt, now)
        from_snapshot = len(rt.latest.records) if start else 0
        count = from_snapshot
        # A shard may apply a plain record straight from its bytes (GroupShard.replay_raw: offset commits);
        # what it declines is decoded and replayed. LatestRecords.add inlined: this loop runs once per record
        # of the log (its since_snapshot and end_offset are set once, after the loop).
        replay_raw = getattr(shard, "replay_raw", None)
        replay_batch = getattr(shard, "replay_plain_batch", None)  # all of the below for one batch, in one call
        latest = rt.latest.records
        async for header, raw in rt.log.batches(start):
            if header.is_control:
                # A transaction's end marker: the pending records of that producer count now, or never.
                marker = read_end_txn_marker(raw, 0, header)
                if marker is not None:
                    rt.transactional = True
                    shard.replay_end_transaction(header.producer_id, marker.committed, now)
                continue
            if header.is_transactional:
                rt.transactional = True
                for record in decode_records(raw, 0, header):
                    if record.key is None or record.offset < start:
                        continue
                    shard.replay(*decode_record(record.key, record.value), now, header.producer_id)
                    count += 1
                continue
            if replay_batch is not None:
                count += replay_batch(decode_key_values(raw, 0, header), start, now, latest, decode_record)
                continue
            for offset, key, value in decode_key_values(raw, 0, header):
                if key is None or offset < start:
                    continue
                if replay_raw is None or not replay_raw(key, value, now):
                    shard.replay(*decode_record(key, value), now, -1)
                if key in latest:
                    del latest[key]  # re-inserted at the end: the dict stays in log order
                latest[key] = pack_latest(offset, value)
                count += 1
        rt.latest.end_offset = max(rt.latest.end_offset, rt.log.log_end_offset)
        rt.latest.since_snapshot = count - from_snapshot
        rt.last_load = (from_snapshot, count - from_snapshot)
        shard.finish_load(self.clock.wall_ms())
        seconds = time.perf_counter() - started
        shard.log.debug("coordinator partition loaded", topic=self.topic, records=count, from_snapshot=from_snapshot,
                        groups=shard.group_count(), seconds=round(seconds, 4))
        self.observer.on_shard_loaded(shard.partition, seconds, count)
        self._reschedule(rt)
        if start:
            # What the snapshot stands for is still checked, in the background: a corrupt batch below it
            # takes the partition offline as a replay would have, it just does not delay serving.
            rt.verifying = asyncio.get_running_loop().create_task(self._verify_below(rt, start),
                                                                 name=f"{self.name}-verify-{shard.partition}")

    async def _replay_snapshot(self, rt: _ShardRuntime, now: int) -> int:
        """Apply the shard's snapshot if it is sound and fits the log; the offset the log replay starts at
        (0 when there is none or it was refused: then the shard is reset for a full replay)."""
        shard, log = rt.shard, rt.log
        directory = getattr(log, "directory", None)
        if directory is None:
            return 0
        data = await log.run_in_executor(snapshots.read_snapshot, directory)
        if data is None:
            return 0
        decode_record = self.codec.decode_record
        try:
            end, records = snapshots.decode_snapshot(data, shard.partition)
            if end > log.log_end_offset:
                raise SnapshotError(f"snapshot ends at offset {end}, past the log end {log.log_end_offset}")
            if end < log.log_start_offset:
                raise SnapshotError(f"snapshot ends at offset {end}, below the log start {log.log_start_offset}")
            for offset, key, value in records:
                shard.replay(*decode_record(key, value), now)
                rt.latest.add(offset, key, value)
        except Exception as exc:  # a refused snapshot is only a slower start: replay the whole log
            shard.log.warning("coordinator snapshot ignored; replaying the whole log", error=str(exc),
                              partition=f"{self.topic}-{shard.partition}")
            await log.run_in_executor(snapshots.discard_snapshot, directory)
            shard.begin_load()
            rt.latest = LatestRecords.empty()
            return 0
        rt.latest.end_offset = end
        return end

    async def _verify_below(self, rt: _ShardRuntime, end: int) -> None:
        """Read (and so CRC-check, once per batch) the log below ``end``; a failure is reported through
        the log's corruption listeners, which take the shard offline."""
        try:
            async for header, _raw in rt.log.batches(0):
                if header.base_offset + header.last_offset_delta >= end:
                    return
        except CorruptLogError:
            pass  # the listener has already acted
        except Exception as exc:
            rt.shard.log.warning("background check of the coordinator log failed", error=repr(exc))

    def _on_corruption(self, rt: _ShardRuntime, exc: CorruptLogError) -> None:
        rt.shard.unavailable = str(exc)
        rt.shard.log.error("coordinator partition offline: its log is corrupt; what it owns answers "
                           "COORDINATOR_NOT_AVAILABLE", partition=f"{self.topic}-{rt.shard.partition}", error=str(exc))

    # ------------------------------------------------------------------ snapshots

    def _may_snapshot(self, rt: _ShardRuntime) -> bool:
        return (self.snapshots and rt.log is not None and getattr(rt.log, "directory", None) is not None and not rt.transactional
                and not rt.shard.loading and rt.shard.unavailable is None
                and getattr(rt.log, "corruption", None) is None)

    def _snapshot_due(self, rt: _ShardRuntime) -> bool:
        interval = getattr(self.config, "group_coordinator_snapshot_interval_records", 10_000)
        if interval <= 0 or rt.snapshotting is not None or not self._may_snapshot(rt):
            return False
        # A snapshot costs its whole size: with much state, take one per half of that in new records.
        return rt.latest.since_snapshot >= max(interval, len(rt.latest.records) // 2)

    def _start_snapshot(self, rt: _ShardRuntime) -> None:
        rt.snapshotting = asyncio.get_running_loop().create_task(self._write_snapshot(rt),
                                                                name=f"{self.name}-snapshot-{rt.shard.partition}")

    async def _write_snapshot(self, rt: _ShardRuntime) -> None:
        """Write down the latest records as of now (every one of them durable: called between appends)."""
        latest, log, partition = rt.latest, rt.log, rt.shard.partition
        # dict.copy(), not a list of its items: a million offsets copy in ~30 ms instead of ~90 ms (no tuple
        # per record), the part of a snapshot the event loop pays for; the copy is the writer's alone.
        records, end = latest.records.copy(), latest.end_offset
        taken = latest.since_snapshot
        try:
            data = await log.run_in_executor(snapshots.encode_latest, partition, end, records)
            await log.run_in_executor(snapshots.write_snapshot, log.directory, data)
        except Exception as exc:  # the next one is tried after as many records again; the log stays the truth
            rt.shard.log.warning("coordinator snapshot not written", error=repr(exc))
            return
        finally:
            rt.snapshotting = None
        if rt.latest is latest:
            latest.since_snapshot = max(latest.since_snapshot - taken, 0)

    # ------------------------------------------------------------------ running operations

    def quiet(self, partition: int) -> bool:
        """Nothing of the shard waits to be made durable: an operation that writes nothing may be answered at
        once (what `run_inline` checks too), without queueing behind earlier writes."""
        rt = self._runtimes[partition]
        return not rt.queue and not rt.writing

    def run_inline(self, partition: int, op: Operation, on_error: ErrorShape) -> dict | asyncio.Future[dict]:
        """As `run`, for an operation that answers within the call and never keeps its reply token (a
        Heartbeat): when it wrote nothing and nothing of the shard is waiting to be made durable, its
        reply is returned as it is — no future, nothing to resolve — and the server answers it inline.
        Otherwise (it wrote records, or earlier writes are pending) its reply waits in a future like
        any other."""
        rt = self._runtimes[partition]
        fx = op(rt.shard, _INLINE, self.clock.wall_ms())
        replies = fx.replies
        if not fx.records and not fx.batches and not rt.queue and not rt.writing:
            answer: Any = _INLINE
            for token, response in replies:
                if token is _INLINE:
                    answer = response
                elif not token.done():
                    token.set_result(response)
            self._reschedule(rt)
            if answer is not _INLINE:
                return answer
            answer = on_error(ErrorCode.unknown_server_error)  # an operation that did not answer: a bug
            _log.error("operation gave no reply", partition=partition)
            return answer
        future = (self._loop or asyncio.get_running_loop()).create_future()
        fx.replies = [(future if token is _INLINE else token, response) for token, response in replies]
        self._submit(rt, fx)
        self._reschedule(rt)
        if not future.done() and self._parked(future, fx):
            rt.outstanding.add(future, on_error)
        return future

    def run(self, partition: int, op: Operation, on_error: ErrorShape, reply: Any = None) -> asyncio.Future[dict]:
        """Run `op` on the partition's shard; the returned future holds the reply. It is often resolved
        already (a heartbeat, a commit that had nothing to write), and the server then answers
        without creating a task — the hot path of a busy coordinator. ``reply``: what to answer instead of
        a new future (a frame-loop lane's ``OwedAnswer``: ``done()`` and ``set_result()`` as a future has
        them), returned as given; everything else about the operation is the same."""
        rt = self._runtimes[partition]
        future = reply if reply is not None else (self._loop or asyncio.get_running_loop()).create_future()
        fx = op(rt.shard, future, self.clock.wall_ms())
        self._submit(rt, fx)
        self._reschedule(rt)
        if not future.done() and self._parked(future, fx):
            rt.outstanding.add(future, on_error)
        return future

    def run_request(self, partition: int, handler: Callable[[Any, Any, Any, int], Effects], request: Any,
                    error_of: Callable[[Any, ErrorCode], dict], reply: Any = None) -> Any:
        """`run` for an operation that is one shard method applied to one request: ``handler(shard, request,
        reply, now)`` (an unbound method of the shard's class), and ``error_of(request, code)`` the error
        answer should the reply stay parked when the shard stops or reloads. The same as ``run(partition,
        lambda s, t, now: handler(s, request, t, now), lambda e: error_of(request, e), reply)``, without
        those two closures per request and the frame between: JoinGroup and SyncGroup come this way, six
        and three per group formed, and most are answered without being parked (the error shape is bound
        to its request only for those that are)."""
        rt = self._runtimes[partition]
        future = reply if reply is not None else (self._loop or asyncio.get_running_loop()).create_future()
        fx = handler(rt.shard, request, future, self.clock.wall_ms())
        self._submit(rt, fx)
        self._reschedule(rt)
        if not future.done() and self._parked(future, fx):
            rt.outstanding.add(future, partial(error_of, request))
        return future

    def queue_lane_write(self, partition: int, records: list[tuple[Any, Any]], reply: Any, response: dict) -> None:
        """What `run` does with an operation's Effects, for one the server's lane has already applied to the
        shard (``records`` written to its state, ``response`` the answer once they are durable): the
        records and ``(reply, response)`` join the Effects at the back of the shard's queue when that is the
        last lane write's (one Effects, one append, per loop turn however many commits it carries), else a
        new one is queued. ``reply`` is answered as a future would be (``done()``, ``set_result()``): with
        ``response`` once every record before and of it is durable, or with its errors if that fails or
        times out. With a write timeout, the Effects' ``queued_at`` (where its timeout counts from) moves to each
        write that joins it, so no reply is timed out earlier than `_expire`'s slack already allows, and writes
        join it only for `LANE_JOIN_WINDOW_S` after it was queued, so none is timed out later than that past its
        own deadline: a write stalled while commits keep coming must not keep its first replies waiting. (They
        joined only within 0.5 ms before, and a turn slower than that, every turn under valgrind, queued an
        Effects, a ``_submit``, a release and a wake-up per commit: ~90 of a commit's ~1,600 bytecodes in the
        commit bench.)"""
        rt = self._runtimes[partition]
        queue = rt.queue
        fx = rt.lane_fx
        now = 0.0 if self.write_timeout_s is None else (self._loop or asyncio.get_running_loop()).time()
        if (not queue or queue[-1] is not fx or not fx.replies  # (no replies: the write timeout answered them)
                or now - rt.lane_opened_at > LANE_JOIN_WINDOW_S):
            fx = rt.lane_fx = Effects()
            fx.records = records
            fx.replies = [(reply, response)]
            rt.lane_opened_at = now
            self._submit(rt, fx)
        else:
            fx.records.extend(records)
            fx.replies.append((reply, response))
            fx.queued_at = now
        # No _reschedule: a lane write only stores offsets, which sets no timer of the shard.

    @staticmethod
    def _parked(future: asyncio.Future, fx: Effects) -> bool:
        """Whether ``future``, not answered yet, was parked by its operation (a join waiting for the rest of
        the group) rather than queued with ``fx``'s write. A queued reply is always answered by the write loop
        (its reply, or the same with errors if the write fails); a parked one must be answered with its
        error shape if the shard stops or reloads first (``rt.outstanding``): only those need tracking, so a
        commit costs no extra callback."""
        for token, _ in fx.replies:
            if token is future:
                return False
        return True

    def _submit(self, rt: _ShardRuntime, fx: Effects) -> None:
        if not fx.records and not fx.batches:  # (bool(fx) spelled out: no __bool__ call per operation)
            if not fx.replies:
                return
            if fx.at_once or (not rt.queue and not rt.writing):
                self._release(fx.replies)
                return
        rt.queue.append(fx)
        if self.write_timeout_s is not None:
            fx.queued_at = (self._loop or asyncio.get_running_loop()).time()
            if rt.writing and rt.expiry is None:
                self._arm_expiry(rt)
        rt.wakeup.set()

    @staticmethod
    def _release(replies: list[tuple[Any, dict]]) -> None:
        for future, response in replies:
            if not future.done():
                future.set_result(response)

    async def _write_loop(self, rt: _ShardRuntime) -> None:
        """Group commit, pipelined: everything the shard's operations queued since the last turn becomes one
        append (one record batch where it fits), and while that append waits for its fsync the next turn's
        records are appended behind it (the log shares fsyncs among appends queued meanwhile, and runs at
        most one at a time), so a slow fsync does not stop the shard from accepting and writing. At most
        ``APPENDS_IN_FLIGHT`` appends are outstanding; replies are released strictly in order, each once
        its own records and every earlier one are durable."""
        linger = getattr(self.config, "group_coordinator_append_linger_ms", 0) / 1000.0
        inflight = rt.inflight
        wakeup = rt.wakeup
        while self._started or rt.queue or inflight:
            while inflight and inflight[0][0].done():
                task, batch = inflight.popleft()
                if task.exception() is not None:
                    await self._append_failed(rt, task.exception(), batch, inflight)  # type: ignore[arg-type]
                    continue
                self._durable(rt, task.result(), batch)
            rt.writing = bool(inflight)
            if not inflight and rt.expiry is not None:
                rt.expiry.cancel()
                rt.expiry = None
            if rt.queue and not _any_writes(rt.queue):
                # Replies only (a heartbeat or a parked member's answer that came in behind a write): nothing
                # to append, so no append of their own. They wait for every write before them: behind the
                # last append under way they are released with it (or failed with it), else now.
                batch, rt.queue = rt.queue, []
                if inflight:
                    inflight[-1][1].extend(batch)
                else:
                    for fx in batch:
                        self._release(fx.replies)
                continue
            if rt.queue and len(inflight) < APPENDS_IN_FLIGHT:
                if linger > 0:
                    await asyncio.sleep(linger)
                batch, rt.queue = rt.queue, []
                rt.writing = True
                task = (self._loop or asyncio.get_running_loop()).create_task(self._append(rt, _writes_of(batch)))
                task.add_done_callback(lambda _t: wakeup.set())
                inflight.append((task, batch))
                if self.write_timeout_s is not None and rt.expiry is None:
                    self._arm_expiry(rt)
                continue
            wakeup.clear()
            if (rt.queue and len(inflight) < APPENDS_IN_FLIGHT) or (inflight and inflight[0][0].done()):
                continue
            if not (self._started or rt.queue or inflight):
                break
            await wakeup.wait(self._loop or asyncio.get_running_loop())
        rt.writing = False
        if rt.expiry is not None:
            rt.expiry.cancel()
            rt.expiry = None

    # ------------------------------------------------------------------ reads of durable state

    def pending_records(self, partition: int) -> list[tuple[Any, Any]] | None:
        """The plain records the shard has applied but not yet made durable (being appended, or queued
        behind the appends), oldest first; None when that cannot be told from plain records alone (the
        partition holds transactional records, or a transactional batch or marker is pending): then a read
        of durable state must wait for the writes instead."""
        rt = self._runtimes[partition]
        if rt.transactional:
            return None
        out: list[tuple[Any, Any]] = []
        for fx in self._waiting(rt):
            if fx.batches:
                return None
            out.extend(fx.records)
        return out

    def durable_value(self, partition: int, key: Any) -> Any:
        """The value of ``key``'s latest durable record (None: none, or a tombstone)."""
        rt = self._runtimes[partition]
        raw_key = self.codec.encode_key(key)
        latest = rt.latest.get(raw_key)
        if latest is None or latest[1] is None:
            return None
        return self.codec.decode_record(raw_key, latest[1])[1]

    # ------------------------------------------------------------------ write timeout

    @staticmethod
    def _waiting(rt: _ShardRuntime) -> list[Effects]:
        """Every Effects whose records are not durable yet: in the appends under way, then queued."""
        return [fx for _task, batch in rt.inflight for fx in batch] + rt.queue

    def _arm_expiry(self, rt: _ShardRuntime) -> None:
        """A timer at the earliest deadline among the replies waiting for durability (one per append, not
        one per request: the hot path pays one clock read per queued operation)."""
        waiting = [fx.queued_at for fx in self._waiting(rt) if fx.replies or fx.after is not None]
        if not waiting:
            return
        loop = self._loop or asyncio.get_running_loop()
        rt.expiry = loop.call_at(min(waiting) + self.write_timeout_s, self._expire, rt)

    def _expire(self, rt: _ShardRuntime) -> None:
        """Answer every reply whose write has not been durable within the timeout, then re-arm for the next."""
        rt.expiry = None
        assert self.write_timeout_s is not None
        now = asyncio.get_running_loop().time()
        expired = 0
        timed_out = []
        for fx in self._waiting(rt):
            if (fx.replies or fx.after is not None) and fx.queued_at + self.write_timeout_s <= now + 0.0005:
                for future, response in fx.replies:
                    if not future.done():
                        future.set_result(fx.on_timeout(response) if fx.on_timeout is not None
                                          else fail_response(response, self.timeout_error))
                        expired += 1
                fx.replies = []
                if fx.after is not None:
                    timed_out.append(fx)
        if timed_out:
            self._run_after_write(rt, timed_out, self.timeout_error)
        if expired:
            rt.shard.log.warning("coordinator write not durable within the write timeout; answered with an error, "
                                 "the write goes on", partition=f"{self.topic}-{rt.shard.partition}",
                                 timeout_ms=int(self.write_timeout_s * 1000), replies=expired)
        if rt.writing:
            self._arm_expiry(rt)

    def _durable(self, rt: _ShardRuntime, appended: list[tuple[Any, list | None]], batch: list[Effects]) -> None:
        """A batch's records are durable: remember them for the next snapshot, then release its replies."""
        add_run = rt.latest.add_run
        for result, chunk in appended:
            if chunk is not None:
                add_run(result.base_offset, chunk)
        for fx in batch:
            self._release(fx.replies)
        after = [fx for fx in batch if fx.after is not None]
        if after:
            self._run_after_write(rt, after, None)
        if self._snapshot_due(rt):
            self._start_snapshot(rt)

    def _run_after_write(self, rt: _ShardRuntime, done: list[Effects], error: ErrorCode | None) -> None:
        """The operations these Effects asked for (``Effects.after_write``), in order, each once: their writes
        are durable (``error`` None) or timed out. What they ask is submitted as any operation's is."""
        now = self.clock.wall_ms()
        shard = rt.shard
        for fx in done:
            operations, fx.after = fx.after or [], None
            for operation in operations:
                self._submit(rt, shard.after_write(operation, now, error))  # type: ignore[attr-defined]
        self._reschedule(rt)

    async def _append_failed(self, rt: _ShardRuntime, exc: BaseException, batch: list[Effects],
                             inflight: deque[tuple[asyncio.Future, list[Effects]]]) -> None:
        """The write is not durable: answer with errors (and so every batch appended behind it, whatever
        became of it) and reload the shard from its log, the truth."""
        rt.shard.log.error("coordinator append failed; reloading shard from its log", topic=self.topic,
                           error=repr(exc))
        batches = [batch]
        while inflight:
            task, later = inflight.popleft()
            await asyncio.wait((task,))
            if not task.cancelled():
                task.exception()  # retrieved: its failure, if any, is this one's consequence
            batches.append(later)
        for each in batches:
            for fx in each:
                for future, response in fx.replies:
                    if not future.done():
                        future.set_result(fail_response(response, ErrorCode.not_coordinator))
        rt.writing = False
        await self._reload_after_failure(rt)

    async def _append(self, rt: _ShardRuntime, writes: list) -> list[tuple[Any, list | None]]:
        """Plain records go out in as few batches as fit; a transactional batch or an end marker is a batch
        of its own, in the order the operations asked for them. Every batch's append is started here, in
        order, before anything is awaited: the log reserves offsets in call order, so a batch of the next
        turn, appended while this one waits for its fsync, always lands after all of this one. Returns each
        batch's append result with its plain records (None for a transactional batch or a marker)."""
        now = self.clock.wall_ms()
        compression = self.compression
        encode_key, encode_value = self.codec.encode_key, self.codec.encode_value
        append = rt.log.append
        started: list[tuple[Any, list | None]] = []  # (the append's coroutine, its plain records)
        chunk: list[tuple[bytes, bytes | None, tuple]] = []
        size = 0

        def flush_chunk() -> None:
            nonlocal chunk, size
            if chunk:
                started.append((append(encode_plain_batch(chunk, now, compression=compression)), chunk))
                chunk, size = [], 0

        try:
            for item in writes:
                if isinstance(item, EndMarker):
                    from groupcoord.protocol.control_records import end_txn_marker_batch  # imported by the load

                    flush_chunk()
                    rt.transactional = True
                    started.append((append(end_txn_marker_batch(
                        item.producer_id, item.producer_epoch, item.coordinator_epoch, item.committed, now)), None))
                    continue
                if isinstance(item, TransactionalRecords):
                    flush_chunk()
                    rt.transactional = True
                    records = [(encode_key(k), encode_value(v), ()) for k, v in item.records]
                    started.append((append(encode_batch(
                        records, base_timestamp=now, compression=compression, producer_id=item.producer_id,
                        producer_epoch=item.producer_epoch, is_transactional=True)), None))
                    continue
                key, value = encode_key(item[0]), encode_value(item[1])
                n = len(key) + (len(value) if value else 0) + 32
                if chunk and size + n > MAX_BATCH_BYTES:
                    flush_chunk()
                chunk.append((key, value, ()))
                size += n
            flush_chunk()
        except BaseException:
            for coro, _ in started:  # built, never started: nothing of this turn reached the log
                coro.close()
            raise
        if not started:
            return []
        if len(started) == 1:  # the common case: one batch, its append awaited as it is (no task, no gather)
            return [(await started[0][0], started[0][1])]
        # Several: each becomes a task now, in order (tasks start in creation order, so the log reserves
        # their offsets in this order), and all are awaited together.
        results = await asyncio.gather(*(asyncio.ensure_future(coro) for coro, _ in started), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return [(result, records) for result, (_, records) in zip(results, started)]

    async def _reload_after_failure(self, rt: _ShardRuntime) -> None:
        rt.outstanding.fail_all(ErrorCode.not_coordinator)
        for fx in rt.queue:
            for future, response in fx.replies:
                if not future.done():
                    future.set_result(fail_response(response, ErrorCode.not_coordinator))
        rt.queue = []
        await self._load_or_refuse(rt)

    # ------------------------------------------------------------------ timers

    def _reschedule(self, rt: _ShardRuntime) -> None:
        deadline = rt.shard.next_deadline()
        if deadline == rt.timer_deadline and rt.timer is not None:
            return
        if rt.timer is not None:
            rt.timer.cancel()
            rt.timer = None
        rt.timer_deadline = deadline
        if deadline is None or not self._started:
            return
        loop = self._loop or asyncio.get_running_loop()  # (the kept loop: no getpid() per re-arm)
        delay = max(deadline - self.clock.wall_ms(), 0) / 1000.0
        rt.timer = loop.call_at(loop.time() + delay, self._on_timer, rt)

    def _on_timer(self, rt: _ShardRuntime) -> None:
        rt.timer = None
        rt.timer_deadline = None
        if rt.shard.loading:
            return
        self._submit(rt, rt.shard.tick(self.clock.wall_ms()))
        self._reschedule(rt)
