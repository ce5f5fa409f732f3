"""Fetch: raw batches from the logs, with Kafka's size limits, long polling and incremental fetch sessions.

Limits follow KIP-74: partitions are read in order, each up to its partition_max_bytes and the response's
remaining max_bytes, and the first batch found is returned whole even when it is larger, so a consumer can
always make progress.

Sessions (KIP-227) live in ``fetch_sessions``: a context decides which partitions a request reads (for an
incremental fetch, every partition of its session) and which of them the answer lists; this module reads
the logs and waits. As in Kafka's KafkaApis, partitions we cannot read at all (an unknown topic id, topic
or partition) are answered after the ones we read, and do not cut a long poll short; an error while reading
(offset out of range, a session's topic id that no longer matches the log's) answers at once.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any, Callable, Final

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.record_batch import iter_batches
from groupcoord.protocol.values import as_ms as _ms
from groupcoord.storage.errors import CorruptLogError, LogClosedError, NotCached
from groupcoord.storage.planned_read import READ_AGAIN, READ_ON, PlannedRead
from groupcoord.storage.segment import cached_reads_available

from groupcoord.coordinator.dataplane.traffic import NO_TRAFFIC_OBSERVER, TrafficObserver
from groupcoord.coordinator.clock import Clock
from groupcoord.coordinator.loop_load import LoopLoad
from groupcoord.coordinator.dataplane.fetch_purgatory import FetchPurgatory, WakeReason
from groupcoord.coordinator.dataplane.fetch_sessions import (FINAL_EPOCH, FetchContext, FetchManager, PartitionRequest,
                                                  PartitionResult, TopicPartitionRef, new_ref, new_request)
from groupcoord.coordinator.dataplane.producer_states import ProducerStates
from groupcoord.coordinator.dataplane.topics import TopicCatalog
from groupcoord.protocol.frozen import builder, frozen_dataclass

READ_COMMITTED = 1


@frozen_dataclass
class FetchPartition:
    partition: int
    fetch_offset: int
    partition_max_bytes: int


_new_partition = builder(FetchPartition)  # (parse_request's: one per partition of every fetch)


@frozen_dataclass
class FetchTopic:
    name: str | None                  # versions <= 12
    topic_id: uuid.UUID | None        # versions >= 13
    partitions: tuple[FetchPartition, ...]


@frozen_dataclass
class ForgottenTopic:
    name: str | None                  # versions 7-12
    topic_id: uuid.UUID | None        # versions >= 13
    partitions: tuple[int, ...]


@frozen_dataclass
class FetchRequestData:
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int
    topics: tuple[FetchTopic, ...]
    session_epoch: int = FINAL_EPOCH          # FINAL with session 0: no session, as before v7
    forgotten: tuple[ForgottenTopic, ...] = ()
    uses_topic_ids: bool = False              # version >= 13


@frozen_dataclass
class _Read:
    """One pass over the partitions: the answers, and what decides whether a long poll may end."""
    results: list[PartitionResult]
    total_bytes: int
    read_error: bool
    readable: list[tuple[str, int]]
    ends: tuple[int, ...]             # each readable partition's end (``_end_offsets``) as its read saw it


class FetchService:
    def __init__(self, catalog: TopicCatalog, purgatory: FetchPurgatory, clock: Clock, sessions: FetchManager,
                 observer: TrafficObserver = NO_TRAFFIC_OBSERVER, producer_states: ProducerStates | None = None,
                 busy_linger_ms: int = 0) -> None:
        """``busy_linger_ms`` (``fetch.busy.linger.ms``; 0: never): how long a fetch woken by data waits before it
        reads while the loop is busy (``_load``, a ``LoopLoad``; ``_wait_and_read``)."""
        self._catalog = catalog
        self._busy_linger_ms = busy_linger_ms
        self._load = LoopLoad()
        self.lingered = 0
        """Fetches that lingered (tests read it)."""
        self._states = producer_states
        self._purgatory = purgatory
        self._clock = clock
        self._sessions = sessions
        self._observer = observer

    async def fetch(self, request: FetchRequestData,
                    authorize: Callable[[set[str]], set[str]] | None = None, regions: bool = False) -> dict:
        """The version-neutral FetchResponse body, after waiting (at most max_wait_ms) for min_bytes.

        ``authorize`` (given when ACLs are on) returns the topics the client may READ among those the
        session fetches; the others answer TOPIC_AUTHORIZATION_FAILED unread, before whether they exist
        is looked at (KafkaApis.handleFetchRequest). With ``regions`` (a connection that sends file regions with
        sendfile: coordinator/server/file_sender.py) large records are answered as regions of the segment files
        (PartitionLog.read's ``region``) rather than read."""
        context = self._context(request)
        targets = context.partitions()
        denied: frozenset[str] = frozenset()
        if authorize is not None:
            names = {ref.topic for ref, _ in targets if ref.topic is not None}
            denied = frozenset(names - authorize(names))
        read = await self._wait_and_read(request, targets, denied, regions)
        answer = context.respond(read.results)
        responses = self._group(answer.partitions)
        for topic in responses:
            sent = sum(len(p["records"]) for p in topic["partitions"])
            if sent:
                self._observer.on_bytes_out(topic["topic"], sent)
        return {"throttle_time": 0, "error_code": answer.error, "session_id": answer.session_id,
                "responses": responses}

    def _context(self, request: FetchRequestData) -> FetchContext:
        fetch_data: dict[tuple, tuple[TopicPartitionRef, PartitionRequest]] = {}
        for topic in request.topics:
            name, topic_id = self._resolved(topic.name, topic.topic_id)  # (once per topic, not per partition)
            by = name if topic_id is None else topic_id          # (TopicPartitionRef.key's first half)
            for part in topic.partitions:
                key = (by, part.partition)
                known = fetch_data.get(key)                         # a repeated partition keeps its place
                first = new_ref(name, topic_id, part.partition) if known is None else known[0]
                fetch_data[key] = (first, new_request(part.fetch_offset, part.partition_max_bytes))
        to_forget = [self._ref(topic.name, topic.topic_id, p) for topic in request.forgotten for p in topic.partitions]
        return self._sessions.new_context(request.session_id, request.session_epoch, request.uses_topic_ids,
                                          list(fetch_data.values()), to_forget, self._topic_name)

    def _ref(self, name: str | None, topic_id: uuid.UUID | None, partition: int) -> TopicPartitionRef:
        return TopicPartitionRef(*self._resolved(name, topic_id), partition)

    def _resolved(self, name: str | None, topic_id: uuid.UUID | None) -> tuple[str | None, uuid.UUID | None]:
        """Kafka resolves a v13+ request's topic ids to names up front; an unknown id keeps no name."""
        if topic_id is not None and name is None:
            return self._topic_name(topic_id), topic_id
        return name, None

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        known = self._catalog.by_id(topic_id)
        return None if known is None else known.name

    async def _wait_and_read(self, request: FetchRequestData,
                             targets: list[tuple[TopicPartitionRef, PartitionRequest]],
                             denied: frozenset[str] = frozenset(), regions: bool = False) -> _Read:
        """Read until min_bytes, a read error or the deadline, as ReplicaManager.fetchMessages decides;
        a fetch with nothing readable is answered at once. A fetch woken by data while more appends to its
        partitions are on their way to durability waits for them too (``ROUND_WAIT_MS``), and, while the loop is
        busy, a further ``busy_linger_ms`` (``_linger``)."""
        deadline = self._clock.monotonic_ms() + max(0, request.max_wait_ms)
        committed = request.isolation_level == READ_COMMITTED
        while True:
            read = await self._read(request, targets, denied, regions)
            if (read.total_bytes >= request.min_bytes or read.read_error or not read.readable
                    or request.max_wait_ms <= 0 or self._clock.monotonic_ms() >= deadline):
                return read
            if self._end_offsets(read.readable, committed) != read.ends:
                continue          # an append landed while we were reading: look again before parking
            reason = await self._purgatory.park(read.readable, deadline)
            if reason is WakeReason.SHUTDOWN:
                return await self._read(request, targets, denied, regions)
            if reason is WakeReason.DATA:
                coming = self._appends_on_their_way(read.readable)
                if coming and await self._purgatory.park(  # (woken by them, the deadline or the bound: read)
                        coming, min(deadline, self._clock.monotonic_ms() + ROUND_WAIT_MS)) is WakeReason.SHUTDOWN:
                    return await self._read(request, targets, denied, regions)
                if self._busy_linger_ms and self._load.busy() and await self._linger(
                        read.readable, deadline) is WakeReason.SHUTDOWN:
                    return await self._read(request, targets, denied, regions)

    def _linger(self, keys: list[tuple[str, int]], deadline: int) -> asyncio.Future[WakeReason]:
        """Hold a woken fetch ``busy_linger_ms`` (at most to its deadline) before it reads, data or not.

        Why: on a saturated loop every request is answered late anyway, and what decides throughput is the work per
        record. A consumer at the log end woken by each write round reads a round's worth of records, and a
        consume-transform-produce client then produces as little per request: franz-go's TestGroupETL at 500,000
        records sent ~33,000 Produce and ~26,000 Fetch requests to groupcoord against ~18,000 and ~5,600 to Kafka,
        and the client spent 1.24 times the CPU. Lingering 25 ms while the loop is busy (``LoopLoad``) gave
        24,700-27,300 and 15,900-19,100, and the test 10-16 % less wall time (three alternated pairs,
        docs/BENCHMARKS.md). A loop with time to spare answers at once, as Kafka does; shutdown and the topic's
        deletion still answer at once."""
        self.lingered += 1
        return self._purgatory.hold(keys, min(deadline, self._clock.monotonic_ms() + self._busy_linger_ms))

    def _appends_on_their_way(self, keys: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The partitions with appends taken (offsets assigned) and not yet readable: a write round has them."""
        coming = []
        for key in keys:
            log = self._catalog.log(*key)
            if log is not None and log.log_end_offset > log.high_watermark:
                coming.append(key)
        return coming

    def _end_offsets(self, keys: list[tuple[str, int]], committed: bool = False) -> tuple[int, ...]:
        """How far each partition can be read: the high watermark, or at read_committed the last stable
        offset (a parked fetch is woken by both moving: appends and decided transactions)."""
        ends = []
        for name, partition in keys:
            log = self._catalog.log(name, partition)
            if log is None:
                ends.append(-1)
            elif committed and self._states is not None:
                ends.append(self._states.stable_end(log))
            else:
                ends.append(log.high_watermark)
        return tuple(ends)

    def _inconsistent(self, ref: TopicPartitionRef, consistent: dict[str, uuid.UUID]) -> bool:
        """The session's topic id is of a topic since deleted and re-created under the same name. ``consistent``:
        by name, the id object a pass found to match already (a topic's partitions share theirs: one catalog
        look-up and one UUID comparison, both Python, per topic and pass, not per partition)."""
        topic_id = ref.topic_id
        if topic_id is None or consistent.get(ref.topic) is topic_id:
            return False
        if self._catalog.get(ref.topic).topic_id != topic_id:
            return True
        consistent[ref.topic] = topic_id
        return False

    def _unreadable(self, ref: TopicPartitionRef, denied: frozenset[str]) -> tuple[ErrorCode | None, Any]:
        """KafkaApis' "erroneous" partitions: an unresolved topic id, a topic the client may not READ, or a
        topic/partition we do not have (the error); else (None, its log), looked up once."""
        topic = ref.topic
        if topic is None:
            return ErrorCode.unknown_topic_id, None
        if topic in denied:
            return ErrorCode.topic_authorization_failed, None
        log = self._catalog.log(topic, ref.partition)
        if log is None:
            return self._catalog.missing_partition_error(topic, ref.partition), None
        return None, log

    async def _read(self, request: FetchRequestData,
                    targets: list[tuple[TopicPartitionRef, PartitionRequest]],
                    denied: frozenset[str] = frozenset(), regions: bool = False) -> _Read:
        """One pass: every partition's answer entry and bounds taken on the loop, their reads planned, and the
        reads run in order in one executor job (``_run_reads``) by KIP-74's budget; reads of a few tails run on the
        loop from the page cache first (``_reads_on_loop``), the job takes the rest. Each readable partition's
        end (``_end_offsets``) is noted as its bounds are taken, so that a fetch about to park compares what it
        read against the logs once, after the read (no pass over the logs before it)."""
        read_error = False
        committed = request.isolation_level == READ_COMMITTED
        states = self._states
        stable_ends = committed and states is not None
        results: list[PartitionResult] = []
        erroneous: list[PartitionResult] = []
        readable = []
        ends = []
        consistent: dict[str, uuid.UUID] = {}
        planned: list[_Planned] = []
        try:
            for ref, part in targets:
                entry = {"partition_index": ref.partition, "error_code": ErrorCode.none, "high_watermark": -1,
                         "last_stable_offset": -1, "log_start_offset": -1,
                         "aborted_transactions": [] if committed else None,
                         "preferred_read_replica": -1, "records": b""}
                error, log = self._unreadable(ref, denied)
                if error is not None:
                    entry["error_code"] = error
                    erroneous.append((ref, entry))
                    continue
                results.append((ref, entry))
                if ref.topic_id is not None and self._inconsistent(ref, consistent):
                    entry["error_code"] = ErrorCode.inconsistent_topic_id
                    read_error = True
                    continue
                readable.append((ref.topic, ref.partition))
                try:
                    if states is None:
                        stable = log.high_watermark
                    else:  # (a loaded table answers at once: no coroutine to await, the same figure)
                        loaded = states.loaded(log.topic, log.partition)
                        if loaded is not None:
                            stable = loaded.last_stable_offset(log.high_watermark)
                        else:
                            stable = await states.last_stable_offset(log)
                            consistent.clear()  # (the catalog may have changed while the table loaded)
                except CorruptLogError:
                    ends.append(states.stable_end(log) if stable_ends else log.high_watermark)
                    entry.update(error_code=ErrorCode.kafka_storage_error)
                    read_error = True
                    continue
                high_watermark = log.high_watermark
                ends.append(states.stable_end(log) if stable_ends else high_watermark)  # (as _end_offsets)
                stable = min(stable, high_watermark)
                entry.update(high_watermark=high_watermark, last_stable_offset=stable,
                             log_start_offset=log.log_start_offset)
                if not log.log_start_offset <= part.fetch_offset <= high_watermark:
                    # Kafka's ReplicaManager answers a failed read with unknown (-1) offsets, not the log's.
                    entry.update(error_code=ErrorCode.offset_out_of_range, high_watermark=-1, last_stable_offset=-1,
                                 log_start_offset=-1)
                    read_error = True
                elif part.fetch_offset < high_watermark:
                    planned.append(_Planned.of(log, entry, part, stable if committed else None,
                                               max(0, min(part.max_bytes, request.max_bytes)), regions))
            budget = _Budget(request.max_bytes)
            outcomes = _run_reads(planned, budget, cached_only=True) if _reads_on_loop(planned) else []
            if planned and (not outcomes or outcomes[-1] is _NOT_CACHED):
                if outcomes:
                    outcomes.pop()
                outcomes += await asyncio.get_running_loop().run_in_executor(
                    None, _run_reads, planned[len(outcomes):], budget)
            for at, (item, outcome) in enumerate(zip(planned, outcomes)):
                if outcome is _SKIPPED:
                    continue
                if outcome is READ_AGAIN or outcome is READ_ON:  # this one and the rest, one by one
                    read_error |= await self._read_one_by_one(planned[at:], budget, regions)
                    break
                if isinstance(outcome, CorruptLogError):
                    item.log.mark_corrupt(outcome)  # (a log already offline stays as it is)
                    read_error = True
                    item.failed()
                    continue
                if isinstance(outcome, BaseException):
                    raise outcome
                self._took(item, outcome)  # (counted against the budget by the job)
        finally:
            for item in planned:
                item.close()
        return _Read(results + erroneous, budget.total, read_error, readable, tuple(ends))

    async def _read_one_by_one(self, planned: list[_Planned], budget: _Budget, regions: bool) -> bool:
        """The planned reads from the first the job left to the loop (its segment deleted meanwhile, or empty for
        it), each run by itself (``PartitionLog.read_to``) by the bound its answer entry holds. Returns whether a
        read failed."""
        read_error = False
        for item in planned:
            item.close()
            limit = budget.limit(item.part.max_bytes)
            if limit is None:
                continue
            try:
                if isinstance(item.plan, BaseException):
                    raise item.plan
                data = await item.log.read_to(item.part.fetch_offset, limit, item.bound, min_one=budget.min_one,
                                              view=True, region=regions)
            except CorruptLogError:
                read_error = True
                item.failed()
                continue
            self._took(item, data)
            budget.took(len(data))
        return read_error

    def _took(self, item: _Planned, data: bytes | memoryview | FileRegion) -> None:
        """A partition's records in its answer entry (with, at read_committed, the aborted transactions they
        overlap)."""
        if not data:
            return
        if item.committed:
            item.entry["aborted_transactions"] = self._aborted(item.log, item.part.fetch_offset, data)
        item.entry["records"] = data

    @staticmethod
    def _aborted(log: Any, fetch_offset: int, data: bytes | memoryview | FileRegion) -> list[dict]:
        """The aborted transactions overlapping what is returned (Kafka's addAbortedTransactions): those still
        open at the fetch offset that began before the end of the returned batches (a region knows where its
        batches end)."""
        upper = fetch_offset
        if type(data) is FileRegion:
            upper = data.next_offset
        else:
            for _pos, header in iter_batches(data, verify=False):
                upper = header.next_offset
        return [{"producer_id": txn.producer_id, "first_offset": txn.first_offset}
                for txn in log.collect_aborted_txns(fetch_offset, upper)]

    def _group(self, partitions: list[PartitionResult]) -> list[dict]:
        """FetchResponse.toMessage: consecutive partitions of one topic share a topic entry, order kept."""
        responses: list[dict] = []
        last = None
        for ref, entry in partitions:
            if ref.key[0] != last:
                responses.append({"topic": ref.topic if ref.topic is not None else "",
                                  "topic_id": self._topic_id(ref), "partitions": []})
                last = ref.key[0]
            responses[-1]["partitions"].append(entry)
        return responses

    def _topic_id(self, ref: TopicPartitionRef) -> uuid.UUID:
        if ref.topic_id is not None:
            return ref.topic_id
        known = self._catalog.get(ref.topic) if ref.topic is not None else None
        return known.topic_id if known is not None else ZERO_UUID


class _Budget:
    """KIP-74's bounds as a fetch reads its partitions in order: each up to its partition_max_bytes and what is
    left of the response's max_bytes, the first batch found returned whole even when it is larger (``min_one``).
    Used by the executor job and, after it, by the loop (never both at once)."""

    __slots__ = ("remaining", "min_one", "total")

    def __init__(self, max_bytes: int) -> None:
        self.remaining = max_bytes
        self.min_one = True
        self.total = 0

    def limit(self, partition_max_bytes: int) -> int | None:
        """The bytes the next partition may read, or None when it is not read at all."""
        if self.remaining > 0 or self.min_one:
            return max(0, min(partition_max_bytes, self.remaining))
        return None

    def took(self, nbytes: int) -> None:
        """A partition's read answered ``nbytes`` (none: the budget is as it was)."""
        if nbytes:
            self.total += nbytes
            self.remaining -= nbytes
            self.min_one = False


class _Planned:
    """One partition's read planned on the loop (``PartitionLog.plan_read``), with its answer entry; ``plan`` is
    the exception the log raised instead when it could not be planned (offline, closed), raised where the read
    would have been."""

    __slots__ = ("log", "entry", "part", "bound", "committed", "plan")

    def __init__(self, log: Any, entry: dict, part: PartitionRequest, bound: int, committed: bool,
                 plan: PlannedRead | BaseException | None) -> None:
        self.log = log
        self.entry = entry
        self.part = part
        self.bound = bound
        self.committed = committed
        self.plan = plan

    @classmethod
    def of(cls, log: Any, entry: dict, part: PartitionRequest, max_offset: int | None, max_bytes: int,
           regions: bool) -> _Planned:
        """Planned with the most the read may be given (``max_bytes``: the partition's, within the response's)."""
        try:
            bound = log.read_bound(max_offset)
        except (CorruptLogError, LogClosedError) as exc:  # (raised where the read would have been, if it is)
            return cls(log, entry, part, entry["high_watermark"], max_offset is not None, exc)
        plan = log.plan_read(part.fetch_offset, max_bytes, bound, view=True, region=regions)
        return cls(log, entry, part, bound, max_offset is not None, plan)

    def failed(self) -> None:
        """The read found a batch whose CRC fails: the log has taken itself offline; this partition answers as
        every later fetch of it will, the others are served."""
        self.entry.update(error_code=ErrorCode.kafka_storage_error, high_watermark=-1, last_stable_offset=-1,
                          log_start_offset=-1)

    def close(self) -> None:
        if type(self.plan) is PlannedRead:
            self.plan.close()


ROUND_WAIT_MS: Final = 100
"""How long a fetch woken by data may wait for the appends to its partitions that a write round is making durable
(``FetchService._wait_and_read``), so that one answer carries them too.

Why: under load a consumer at the log end is woken by every round that makes its partitions' appends readable,
each answer carrying a round's worth of records, and its next fetch (and, in a consume-transform-produce loop, its
next produce batch) is as small: franz-go's TestGroupETL at 500,000 records answered ~27,000 fetches and appended
~510,000 batches (87.5 s, median of 3 pinned runs); answered sooner still (the page-cache reads below, alone: one
run) it fetched 42,600 times, appended 639,000 batches and took 86 s. Waiting for the round already under way costs
an idle broker nothing (no appends on their way: the answer is given at once) and a busy one a round's latency; with
both, the test answered ~24,000 fetches, appended ~430,000 batches and took 70.2 s (median of 3). Kafka answers at
the append that satisfies min_bytes; this answers within max_wait with at least min_bytes as Kafka does, up to a
round later. The bound is for a round that never makes them readable (a failed write): the fetch then answers with
what it has."""

_SKIPPED: Final = object()
"""The outcome of a planned read the budget left unread."""
_NOT_CACHED: Final = object()
"""The last outcome of reads run on the loop when one met bytes the page cache does not hold: that read and the rest
go to the executor."""

LOOP_READ_REACH: Final = 256 * 1024
"""The most a fetch's reads may reach on the event loop: the bytes from each plan's index position to its segment's
end, summed. Within it (consumers at the log end, the bytes just written and cached) the reads are done on the loop
when the page cache holds them (``Segment.read_cached``): no executor hop, whose future, wake-up and GIL hand-overs
cost the saturated loop about as much as the small reads themselves and the answer a loop turn (tens of
milliseconds under franz-go's TestGroupETL). Beyond it (a consumer catching up) the copies are worth a thread."""


def _reads_on_loop(planned: list[_Planned]) -> bool:
    """Whether the planned reads are tried on the loop first (``LOOP_READ_REACH``; a platform without
    ``RWF_NOWAIT``, or whose kernel refused it, never does)."""
    if not planned or not cached_reads_available():
        return False
    reach = 0
    for item in planned:
        plan = item.plan
        if type(plan) is PlannedRead:
            reach += plan.limit - plan.start
    return reach <= LOOP_READ_REACH


def _run_reads(planned: list[_Planned], budget: _Budget, cached_only: bool = False) -> list[Any]:
    """(executor) The planned reads in order, by the budget: per read its records, ``_SKIPPED``, the
    ``CorruptLogError`` it met (the loop takes the log offline), or, ending the job, ``READ_AGAIN``/``READ_ON``
    (its segment deleted meanwhile or empty for it: the loop reads that partition and the rest) or the exception
    a plan holds. (loop) With ``cached_only``, the same from the page cache, ended by ``_NOT_CACHED`` at the first
    read it does not hold (that read and the rest for the executor, with the budget as they left it)."""
    outcomes: list[Any] = []
    for item in planned:
        limit = budget.limit(item.part.max_bytes)
        if limit is None:
            outcomes.append(_SKIPPED)
            continue
        plan = item.plan
        if plan is None:
            data: Any = b""
        elif type(plan) is PlannedRead:
            try:
                data = plan.run(limit, budget.min_one, cached_only)
            except CorruptLogError as exc:
                outcomes.append(exc)
                continue
            except NotCached:
                outcomes.append(_NOT_CACHED)
                break
        elif isinstance(plan, CorruptLogError):
            outcomes.append(plan)
            continue
        else:
            outcomes.append(plan)
            break
        outcomes.append(data)
        if data is READ_AGAIN or data is READ_ON:
            break
        budget.took(len(data))
    return outcomes


def parse_request(request: Any, api_version: int) -> FetchRequestData:
    """Lift a kio FetchRequest of any version (v4+) into FetchRequestData."""
    by_id = api_version >= 13
    topics = []
    for topic in request.topics:
        topics.append(FetchTopic(
            name=None if by_id else topic.topic,
            topic_id=topic.topic_id if by_id else None,
            partitions=tuple([_new_partition(p.partition, int(p.fetch_offset), int(p.partition_max_bytes))
                              for p in topic.partitions])))
    forgotten = tuple(ForgottenTopic(name=None if by_id else topic.topic, topic_id=topic.topic_id if by_id else None,
                                     partitions=tuple(int(p) for p in topic.partitions))
                      for topic in getattr(request, "forgotten_topics_data", ()))
    return FetchRequestData(
        max_wait_ms=_ms(request.max_wait),
        min_bytes=int(request.min_bytes),
        max_bytes=int(getattr(request, "max_bytes", 0x7FFFFFFF)),
        isolation_level=int(getattr(request, "isolation_level", 0)),
        session_id=int(getattr(request, "session_id", 0)),
        topics=tuple(topics),
        session_epoch=int(getattr(request, "session_epoch", FINAL_EPOCH)),
        forgotten=forgotten,
        uses_topic_ids=by_id)


