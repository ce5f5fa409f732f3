"""Produce: validate each partition's batch, apply idempotence rules, append, answer per partition.

A per-partition FIFO lock, taken before any await on the hot path, covers the sequence check and the
queuing of the write, so pipelined requests from one producer land in the order they arrived and no two
batches pass the check against the same state. The lock is released before the append becomes durable,
so appends queued meanwhile share one fsync (group commit). The storage engine acknowledges an append
only once it is durable per the fsync policy, and with a single replica the ISR is just this node:
acks=1 and acks=-1 therefore wait for the same thing. acks=0 appends the same way and gets no answer
(the handler closes the connection instead when a partition failed, see handlers.py).
"""
from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import Any, Awaitable, Callable, Final, Iterable

from groupcoord.protocol.errors import ErrorCode
from groupcoord.storage.config import TimestampType

from groupcoord.coordinator.dataplane.traffic import NO_TRAFFIC_OBSERVER, TrafficObserver
from groupcoord.coordinator.dataplane.batch_validation import (INLINE_DECOMPRESSED_BYTES, NEEDS_WORKER, BatchRejected,
                                                                TimestampWindow, validate_batch)
from groupcoord.coordinator.clock import Clock
from groupcoord.coordinator.eager_start import Started, start_eagerly
from groupcoord.coordinator.dataplane.names import is_internal
from groupcoord.coordinator.dataplane.producer_state import SequenceVerdict
from groupcoord.coordinator.dataplane.producer_states import ProducerStates
from groupcoord.coordinator.dataplane.topics import TopicCatalog
from groupcoord.protocol.frozen import frozen_dataclass

VALID_ACKS = (-1, 0, 1)

# Enum members read per partition, as module globals: an Enum class attribute is read through EnumType's lookup
# hook (~0.2 µs on CPython 3.11), a global is cached by the interpreter.
_NONE: Final = ErrorCode.none
_LOG_APPEND_TIME: Final = TimestampType.LOG_APPEND_TIME
_APPEND: Final = SequenceVerdict.APPEND
_DUPLICATE: Final = SequenceVerdict.DUPLICATE
_REFUSALS: Final = {SequenceVerdict.INVALID_TXN_STATE: ErrorCode.invalid_txn_state,
                    SequenceVerdict.INVALID_PRODUCER_EPOCH: ErrorCode.invalid_producer_epoch,
                    SequenceVerdict.OUT_OF_ORDER_SEQUENCE: ErrorCode.out_of_order_sequence_number}
"""The sequence verdicts the log refuses a batch for, and the partition's error for each."""

TransactionVerifier = Callable[[str, int, int, list[tuple[str, int]]], Awaitable[dict[tuple[str, int], ErrorCode]]]
"""``verifier(transactional_id, producer_id, producer_epoch, partitions)``: the transaction coordinator's
answer whether each partition is part of that producer's ongoing transaction (Kafka's AddPartitionsToTxn
verifyOnly), by partition."""

_RETRIABLE_VERIFICATION_ERRORS = frozenset({
    ErrorCode.concurrent_transactions, ErrorCode.network_exception, ErrorCode.coordinator_load_in_progress,
    ErrorCode.coordinator_not_available, ErrorCode.not_coordinator})


@frozen_dataclass
class PartitionData:
    """One partition of a Produce request: its index and record batch bytes."""
    index: int
    records: bytes | None


@frozen_dataclass
class TopicData:
    """One topic of a Produce request and its partitions."""
    name: str
    partitions: tuple[PartitionData, ...]


def _partition_error(index: int, error: ErrorCode, message: str | None = None) -> dict:
    return {"index": index, "error_code": error, "base_offset": -1, "log_append_time": -1,
            "log_start_offset": -1, "record_errors": [], "error_message": message}


def _rejected_by_log(index: int, log: Any, error: ErrorCode, message: str | None) -> dict:
    """A refusal raised by the log's own producer-state check: Kafka's ReplicaManager answers these (its
    catch-all branch of appendToLocalLog) with the partition's log start offset, unlike refusals made before
    the partition's log is reached."""
    return {**_partition_error(index, error, message), "log_start_offset": log.log_start_offset}


class ProduceService:
    def __init__(self, catalog: TopicCatalog, clock: Clock, producer_states: ProducerStates,
                 observer: TrafficObserver = NO_TRAFFIC_OBSERVER) -> None:
        self._catalog = catalog
        self._clock = clock
        self._states = producer_states
        self._observer = observer
        self._offloaded: dict[tuple[str, int], asyncio.Future[None]] = {}
        """Partitions with a batch being validated on a worker thread, and the gate later batches wait at."""
        self._last_window: TimestampWindow | None = None
        """``_window``'s last answer."""
        self.verifier: TransactionVerifier | None = None
        """Kafka 4's transaction.partition.verification.enable: set by the transaction coordinator; None
        means transactional batches are appended unverified."""

    async def produce(self, *, acks: int, api_version: int, topics: Iterable[TopicData],
                      transactional_id: str | None = None) -> dict:
        """The version-neutral ProduceResponse body. Partitions are appended concurrently; each
        partition's outcome is independent of the others.

        Each partition's admission (validation, the sequence check, the write queued) is done now, in request
        order, so that per-partition locks are queued in that order: by ``_produce_now`` when nothing has to be
        awaited (no coroutine), else by ``_produce_partition``, started at once (coordinator/eager_start.py), which
        carries on in a Task of its own when it has to wait (its topic created, a batch validated on a worker, a
        transaction verified, its lock or producer table). The answers are then awaited in order: each once its
        append is durable (what happens when an append completes, the producer table's bookkeeping, does not wait
        for this, see ``_appended``). The bytes appended are told to the observer once per topic of the request."""
        work: list[tuple[str, list[Started | dict | _Admitted]]] = []
        for topic in topics:
            entries: list[Started | dict | _Admitted] = []
            for part in topic.partitions:
                if acks not in VALID_ACKS:
                    entries.append(_partition_error(part.index, ErrorCode.invalid_required_acks))
                else:
                    entry = self._produce_now(topic.name, part.index, part.records, api_version)
                    entries.append(start_eagerly(self._produce_partition(
                        topic.name, part.index, part.records, api_version, transactional_id, entry))
                        if type(entry) is _Later else entry)
            work.append((topic.name, entries))
        responses = []
        for name, entries in work:
            partitions = []
            appended = 0
            for entry in entries:
                if type(entry) is Started:
                    entry = entry.result if entry.finished else await entry.task  # type: ignore[union-attr]
                if type(entry) is _Admitted:
                    append = entry.append
                    if append.done():  # (no coroutine to await: ``answer``'s steps, here)
                        answer = entry.answer_now()
                    else:
                        answer = await entry.answer()
                    if answer["error_code"] is _NONE:
                        appended += entry.nbytes
                    entry = answer
                partitions.append(entry)
            if appended:
                self._observer.on_bytes_in(name, appended)
            responses.append({"name": name, "partition_responses": partitions})
        return {"responses": responses, "throttle_time": 0}

    def _produce_now(self, topic_name: str, index: int, records: bytes | None,
                     api_version: int) -> dict | _Admitted | _Later:
        """The partition's refusal or its batch admitted, when nothing has to be awaited (the common case: a known
        partition, a non-transactional batch validated inline, its lock free and its producer table loaded);
        else a ``_Later`` for ``_produce_partition``, with nothing changed but the validation it carries on from.

        Why: the same steps as ``_produce_partition`` and ``_admit`` (the same helpers, in the same order), without
        the two coroutines, their first step and the StopIteration that ends them, for every partition append of
        every Produce request."""
        target = self._target(topic_name, index)
        if type(target) is not tuple:
            return target  # type: ignore[return-value]
        topic, log = target
        if self._offloaded and (topic_name, index) in self._offloaded:
            return _Later(target)
        checked = self._validate(topic, records, api_version, self._window(topic))
        if checked is NEEDS_WORKER:
            return _Later(target, checked)
        refusal = _refusal(index, topic, checked)
        if refusal is not None:
            return refusal
        lock = self._states.lock(topic_name, index)
        if checked.header.is_transactional or not lock.free():
            return _Later(target, checked)
        state = self._states.loaded(topic_name, index)
        if state is None:
            return _Later(target, checked)
        lock.try_acquire()
        try:
            return self._admit_locked(topic_name, index, topic, log, checked, state)
        finally:
            lock.release()

    async def _produce_partition(self, topic_name: str, index: int, records: bytes | None, api_version: int,
                                 transactional_id: str | None, later: _Later) -> dict | _Admitted:
        """The partition's refusal, or its batch admitted (``_Admitted``: the answer once durable), carried on from
        what ``_produce_now`` found (``later``: the partition's topic and log, its batch validated, as far as it
        got before finding something to wait for; it runs in the same loop turn, so neither is looked up again)."""
        target = later.target
        if target is None:  # the topic is not known here yet
            found = await self._catalog.ensure(topic_name)
            if found.topic is None:
                return _partition_error(index, found.error, found.message)
            target = self._target(topic_name, index, found.topic)
            if type(target) is not tuple:
                return target  # type: ignore[return-value]
        topic, log = target
        where = (topic_name, index)
        ahead = self._offloaded.get(where)
        if ahead is not None:
            await ahead  # a batch before this one is being validated on a worker: keep the partition's order
        checked = later.checked
        if checked is None:
            checked = self._validate(topic, records, api_version, self._window(topic))
        gate = None
        if checked is NEEDS_WORKER:
            # It expands past what the loop should spend on one payload (up to 64x max.message.bytes): the
            # same validation on a worker thread while other connections are served. Batches of the same
            # partition behind it wait for it (its gate opens once it has queued for the partition's lock).
            loop = asyncio.get_running_loop()
            gate = self._offloaded[where] = loop.create_future()
            try:
                checked = await loop.run_in_executor(None, partial(self._validate, topic, records, api_version,
                                                                   self._window(topic), None))
            except BaseException:
                self._open_gate(where, gate)
                raise
        try:
            return await self._admit(topic_name, index, topic, log, checked, transactional_id, gate)
        finally:
            if gate is not None:
                self._open_gate(where, gate)

    def _target(self, topic_name: str, index: int, topic: Any = None) -> tuple[Any, Any] | dict | _Later:
        """(topic, partition log) to append to, the partition's refusal, or ``_LATER`` when the topic is not
        known here yet (``TopicCatalog.ensure`` may create it). ``topic``: the one ``ensure`` found."""
        if is_internal(topic_name):
            return _partition_error(index, ErrorCode.invalid_topic_exception,
                                    f"Cannot append to internal topic {topic_name}")
        if topic is None:
            topic = self._catalog.get(topic_name)
            if topic is None:
                return _LATER
        log = self._catalog.log(topic_name, index)
        if log is None:
            error = self._catalog.missing_partition_error(topic_name, index)
            return _partition_error(index, error, "This server does not host this topic-partition."
                                    if error is ErrorCode.unknown_topic_or_partition else
                                    "The partition's log is corrupt; it is offline until repaired.")
        return topic, log

    def _window(self, topic: Any) -> TimestampWindow | None:
        """The window the topic's CreateTime records must fall in now, or None when it sets none. The last one made
        is given again while the clock's millisecond and the bounds are the same (under load most appends of a
        millisecond are of topics with the default bounds): one dataclass fewer to build per append."""
        window = topic.timestamp_window_ms
        if window is None:
            return None
        now = self._clock.wall_ms()
        last = self._last_window
        if last is not None and last.now_ms == now and last.before_ms == window[0] and last.after_ms == window[1]:
            return last
        last = self._last_window = TimestampWindow(now, window[0], window[1])
        return last

    @staticmethod
    def _validate(topic: Any, records: bytes | None, api_version: int, timestamps: TimestampWindow | None,
                  inline_limit: int | None = INLINE_DECOMPRESSED_BYTES) -> Any:
        """``validate_batch`` against the topic's configuration; ``inline_limit`` as there (None on a worker)."""
        config = topic.log_config
        return validate_batch(records, api_version=api_version, max_message_bytes=config.max_message_bytes,
                              compacted=config.compact, timestamps=timestamps, inline_limit=inline_limit)

    def _open_gate(self, where: tuple[str, int], gate: "asyncio.Future[None]") -> None:
        if not gate.done():
            gate.set_result(None)
        if self._offloaded.get(where) is gate:
            del self._offloaded[where]

    async def _admit(self, topic_name: str, index: int, topic: Any, log: Any, checked: Any,
                     transactional_id: str | None, gate: "asyncio.Future[None] | None") -> dict | _Admitted:
        refusal = _refusal(index, topic, checked)
        if refusal is not None:
            return refusal
        header = checked.header
        if header.is_transactional:
            refusal = await self._verify_transactional(topic_name, index, log, header, transactional_id)
            if refusal is not None:
                return refusal
        lock = self._states.lock(topic_name, index)
        if not lock.try_acquire():  # (free nearly always: no coroutine then, storage/fifo_lock.py)
            await lock.acquire()
        try:
            if gate is not None:
                self._open_gate((topic_name, index), gate)  # the batches behind it may queue for the lock now
            state = self._states.loaded(topic_name, index)
            if state is None:  # (a coroutine to await only for a table not loaded yet)
                state = await self._states.state_for(log)
            return self._admit_locked(topic_name, index, topic, log, checked, state)
        finally:
            lock.release()

    def _admit_locked(self, topic_name: str, index: int, topic: Any, log: Any, checked: Any,
                      state: Any) -> dict | _Admitted:
        """Under the partition's lock: the producer's sequence checked, then the batch recorded and its append
        queued (or the refusal, or a retry's answer)."""
        header = checked.header
        append_time = None
        if topic.log_config.message_timestamp_type is _LOG_APPEND_TIME:
            append_time = self._clock.wall_ms()          # the storage engine stamps the batch with it
        producer_id = header.producer_id
        transactional = header.is_transactional
        verdict = state.check(producer_id, header.producer_epoch, header.base_sequence, header.records_count,
                              transactional)
        if verdict.verdict is not _APPEND:
            if verdict.verdict is not _DUPLICATE:
                return _rejected_by_log(index, log, _REFUSALS[verdict.verdict], verdict.message)
            pending = self._states.pending.get((topic_name, index, producer_id, header.base_sequence))
            if pending is None:  # the original is durable: its offset is known
                return _duplicate_answer(index, log, verdict.duplicate_of.first_offset)
            return _Admitted(index, log, pending, 0, True)
        # APPEND: admit the batch now and let the storage engine queue its write in this order; the lock
        # is not held while the append waits to become durable, so concurrent appends share one
        # fsync (group commit). The timestamp kept is the batch's as stored: LogAppendTime
        # topics get the append time in it.
        batch = state.record(producer_id, header.producer_epoch, header.base_sequence, header.records_count, -1, -1,
                             header.max_timestamp if append_time is None else append_time, transactional)
        # A transaction opened by this batch begins at the offset the log gives it, recorded before
        # the batch can be read so the last stable offset holds readers back from it.
        on_assigned = ((lambda first, _last, pid=producer_id: state.begin_txn(pid, first))
                       if transactional else None)
        # Reserved at once when the log can (no Task, no coroutine: PartitionLog.append_now), else the
        # general append in a Task of its own, queued behind whatever holds the log's append lock.
        append = log.append_now(checked.data, log_append_time=append_time, on_assigned=on_assigned,
                                headers=[(0, header)])
        if append is None:
            append = asyncio.get_running_loop().create_task(
                log.append(checked.data, log_append_time=append_time, on_assigned=on_assigned,
                           headers=[(0, header)]))
        key = (topic_name, index, producer_id, header.base_sequence)
        if producer_id >= 0:
            self._states.pending[key] = append
        append.add_done_callback(partial(self._appended, state, producer_id, header.base_sequence, batch, key))
        return _Admitted(index, log, append, len(checked.data), False)

    def _appended(self, state: Any, producer_id: int, base_sequence: int, batch: Any,
                  key: tuple[str, int, int, int], append: asyncio.Future) -> None:
        """An admitted append completed: its offsets filled in the producer table, or, when the write failed,
        the batch forgotten so that the producer's retry is appended. Run by the append's completion, whoever
        waits for the partition's answer (and whether anyone still does)."""
        if self._states.pending.get(key) is append:
            del self._states.pending[key]
        if append.cancelled():
            return
        failure = append.exception()
        if failure is None:
            if batch is not None:  # (the entry ``record`` made: no second look-up)
                result = append.result()
                batch.first_offset, batch.last_offset = result.base_offset, result.last_offset
        elif isinstance(failure, Exception):
            state.discard(producer_id, base_sequence)

    async def _verify_transactional(self, topic_name: str, index: int, log: Any, header: Any,
                                    transactional_id: str | None) -> dict | None:
        """The refusal of a transactional batch, or None to go on. Kafka refuses transactional records in a
        request without a transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and, with partition
        verification on, asks the transaction coordinator whether a partition not yet in the producer's open
        transaction here was added to it; the coordinator's retriable errors reach the producer as
        NOT_ENOUGH_REPLICAS, which older clients retry without a metadata refresh (ReplicaManager)."""
        if transactional_id is None:
            return _partition_error(index, ErrorCode.transactional_id_authorization_failed,
                                    "Transactional records need the request's transactional id")
        if self.verifier is None:
            return None
        state = await self._states.state_for(log)
        entry = state.entry(header.producer_id)
        if entry is not None and entry.in_transaction and entry.epoch == header.producer_epoch:
            return None
        try:
            answers = await self.verifier(transactional_id, header.producer_id, header.producer_epoch,
                                          [(topic_name, index)])
        except Exception as exc:  # the coordinator could not answer: the producer retries
            return _partition_error(index, ErrorCode.not_enough_replicas,
                                    f"Unable to verify the partition has been added to the transaction: {exc}")
        error = answers.get((topic_name, index), ErrorCode.none)
        if error == ErrorCode.none:
            return None
        error = ErrorCode(error)
        if error is ErrorCode.invalid_txn_state:
            return _partition_error(index, error, "Partition was not added to the transaction")
        if error in _RETRIABLE_VERIFICATION_ERRORS:
            return _partition_error(index, ErrorCode.not_enough_replicas,
                                    "Unable to verify the partition has been added to the transaction. "
                                    f"Underlying error: {error.name.upper()}")
        return _partition_error(index, error)



def _refusal(index: int, topic: Any, checked: Any) -> dict | None:
    """The partition's error for a batch validation refused, or one larger than the topic's segments."""
    if type(checked) is BatchRejected:
        return _partition_error(index, checked.error, checked.message)
    if checked.header.size > topic.log_config.segment_bytes:
        return _partition_error(index, ErrorCode.record_list_too_large,
                                f"The request included message batch larger than the configured segment "
                                f"size on the server: {checked.header.size}")
    return None


class _Later:
    """``_produce_now`` found something to wait for: ``_produce_partition`` carries on from the partition's
    (topic, log) (``target``, None when the topic is not known here yet) and the batch already validated
    (``checked``, None when a batch of the partition on a worker is ahead of it)."""

    __slots__ = ("target", "checked")

    def __init__(self, target: tuple[Any, Any] | None = None, checked: Any = None) -> None:
        self.target = target
        self.checked = checked


_LATER: Final = _Later()
"""The topic is not known here yet (``TopicCatalog.ensure`` may create it)."""


def _duplicate_answer(index: int, log: Any, base_offset: int) -> dict:
    """A retry of a batch already admitted: answered with the offset the original got."""
    return {"index": index, "error_code": _NONE, "base_offset": base_offset,
            "log_append_time": -1, "log_start_offset": log.log_start_offset,
            "record_errors": [], "error_message": None}


class _Admitted:
    """A partition's batch admitted (or a retry of one still being appended): its answer once the append is
    durable. ``nbytes``: the bytes it appends (0 for a retry, which appends none)."""

    __slots__ = ("index", "log", "append", "nbytes", "duplicate")

    def __init__(self, index: int, log: Any, append: asyncio.Future, nbytes: int, duplicate: bool) -> None:
        self.index = index
        self.log = log
        self.append = append
        self.nbytes = nbytes
        self.duplicate = duplicate

    async def answer(self) -> dict:
        # A retry waits for the original without cancelling it if the retry's request goes away. A failed write
        # is answered by answer_now, from the append's outcome.
        with contextlib.suppress(Exception):
            await (asyncio.shield(self.append) if self.duplicate else self.append)
        return self.answer_now()

    def answer_now(self) -> dict:
        """The answer, once the append is done."""
        index, log = self.index, self.log
        append = self.append
        if append.cancelled():
            raise asyncio.CancelledError()
        failure = append.exception()
        if failure is not None:
            if not isinstance(failure, Exception):
                raise failure
            # the write failed (the producer table forgot the batch: see ``_appended``)
            return _partition_error(index, ErrorCode.kafka_storage_error, f"append failed: {failure}")
        result = append.result()
        if self.duplicate:
            return _duplicate_answer(index, log, result.base_offset)
        return {"index": index, "error_code": _NONE, "base_offset": result.base_offset,
                "log_append_time": result.log_append_time,
                "log_start_offset": log.log_start_offset, "record_errors": [], "error_message": None}
