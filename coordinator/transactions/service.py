"""The transaction coordinator as the broker calls it (Kafka's TransactionCoordinator): one method per API.

A transactional id is owned by the ``__transaction_state`` partition its Java ``String.hashCode`` picks
(as groups are placed on ``__consumer_offsets``); each partition is a ``TxnShard`` run by the same
coordinator runtime as the group shards, which appends its records, answers once they are durable and
replays them on start-up. A prepared transaction's markers are written by ``MarkerRouter`` once the
prepare record is durable, retried until written, and the transaction then completes; after a restart
every transaction found prepared has its markers written again (markers are idempotent for a
partition: a second one for an already ended transaction changes nothing).
"""

from __future__ import annotations

import asyncio
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import structlog

from groupcoord.coordinator.clock import Clock, SystemClock
from groupcoord.coordinator.first_use import made
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.runtime.coordinator_runtime import CoordinatorRuntime
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.transactions.observer import TransactionObserverAdapter
from groupcoord.coordinator.transactions.state import TxnState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import TRANSACTION_STATE_TOPIC
from groupcoord.storage.config import CleanupPolicy, LogConfig

if TYPE_CHECKING:
    from groupcoord.coordinator.transactions.markers import MarkerRouter, TopicPartition
    from groupcoord.coordinator.transactions.metadata import TransactionMetadata
    from groupcoord.coordinator.transactions.shard import ExpectedProducer, TxnShard

_log = structlog.get_logger("groupcoord.transactions")

COORDINATOR_EPOCH = 0  # one broker, never re-elected: the partition's leader epoch stays 0
MARKER_RETRY_BACKOFF_S = 0.1
MARKER_RETRY_BACKOFF_MAX_S = 5.0


def _partition_count(config: Any, log_manager: Any) -> int:
    """Kafka routes by the topic's real partition count once it exists. A partition directory past the
    setting shows the topic has more (the setting was lowered): those are used, so no transactional id moves
    away from its records. (Fewer directories prove nothing: a partition may simply never have been
    written, or only some were copied; and a raised setting cannot be told from that, so it is the operator's
    to keep, as the setting's help says.)"""
    configured = config.transaction_state_log_num_partitions
    existing = {p for t, p in list(getattr(log_manager, "logs", {})) if t == TRANSACTION_STATE_TOPIC}
    if existing and max(existing) + 1 > configured:
        _log.warning("__transaction_state has more partitions than transaction.state.log.num.partitions; "
                     "using the topic's", topic_partitions=max(existing) + 1, configured=configured)
        return max(existing) + 1
    return configured


class TransactionCoordinator:
    def __init__(self, config: Any, log_manager: Any, groups: Any, new_producer_id: Callable[[], int], *,
                 clock: Clock | None = None, observer: object | None = None,
                 topic_defaults: LogConfig | None = None) -> None:
        self.config = config
        self.topic_defaults = topic_defaults or LogConfig()
        self.num_partitions = _partition_count(config, log_manager)
        self.clock = clock or SystemClock()
        self.observer = TransactionObserverAdapter(observer)
        self._groups = groups
        self._data_writer: Any = None
        self._marker_tasks: set[asyncio.Task] = set()
        self._writing: set[tuple[str, int, int]] = set()  # (transactional id, producer id, epoch) with markers in flight
        self._new_producer_id = new_producer_id
        self._shard_observer = observer
        self._log_manager = log_manager
        self._active = False
        self._activating: asyncio.Task | None = None

    @cached_property
    def markers(self) -> MarkerRouter:
        """Where markers go, made (and its module imported) by the first markers written: a prepared transaction's,
        or a WriteTxnMarkers request's."""
        from groupcoord.coordinator.transactions.markers import MarkerRouter

        return MarkerRouter(self._groups, self._data_writer)

    @cached_property
    def _runtime(self) -> CoordinatorRuntime:
        """The shards and their runtime, made (and the transaction state's shard, metadata and record modules
        imported: ~2 % of the daemon's start-up) when first asked for: by the first transactional request's
        activation, by ``start`` when the topic has partitions on disk (after the broker listens), or by a read
        of the shards (a metrics scrape)."""
        from groupcoord.coordinator.transactions import records
        from groupcoord.coordinator.transactions.shard import TxnShard

        config = self.config
        shards = [TxnShard(p, config, new_producer_id=self._new_producer_id, markers_token=self._markers_token,
                           send_markers=self._send_markers, observer=self._shard_observer)
                  for p in range(self.num_partitions)]
        return CoordinatorRuntime(shards, config, self._log_manager, self.log_config, self.clock, self.observer,
                                  topic=TRANSACTION_STATE_TOPIC, codec=records, name="transactions")

    def set_data_marker_writer(self, writer: Any) -> None:
        """The data plane's marker write (the broker assembly wires it)."""
        self._data_writer = writer
        markers = made(self, "markers")
        if markers is not None:
            markers.data_writer = writer

    @property
    def log_config(self) -> LogConfig:
        """As Kafka creates __transaction_state: compacted, its own segment size, no compression."""
        return LogConfig.from_topic_configs(
            {"cleanup.policy": CleanupPolicy.COMPACT.value,
             "segment.bytes": str(self.config.transaction_state_log_segment_bytes)},
            base=self.topic_defaults,
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Load ``__transaction_state`` if it exists. Like Kafka, the topic (50 partitions) is created only
        when transactions are first used (``ensure_active``), so a broker that never sees one hosts none."""
        if any(topic == TRANSACTION_STATE_TOPIC for topic, _ in list(self._log_manager.logs)):
            await self._activate()

    def ensure_active(self) -> bool:
        """True once every partition is loaded; else start creating/loading them (FindCoordinator answers
        COORDINATOR_NOT_AVAILABLE meanwhile, as Kafka's does while it creates the topic; the shards answer
        COORDINATOR_LOAD_IN_PROGRESS)."""
        if self._active:
            return True
        if self._activating is None:
            self._activating = asyncio.get_running_loop().create_task(self._activate(), name="transactions-start")
        return False

    @property
    def active(self) -> bool:
        return self._active

    async def wait_active(self) -> None:
        """Create/load ``__transaction_state`` now and return once it is served (tests, embedding)."""
        if not self.ensure_active():
            await asyncio.shield(self._activating)

    async def _activate(self) -> None:
        await self._runtime.start()  # each shard's finish_load resends the markers of what it found prepared
        self._active = True

    async def stop(self) -> None:
        if self._activating is not None:
            await asyncio.gather(self._activating, return_exceptions=True)
            self._activating = None
        was_active, self._active = self._active, False
        for task in list(self._marker_tasks):
            task.cancel()
        await asyncio.gather(*self._marker_tasks, return_exceptions=True)
        if was_active:
            await self._runtime.stop()

    # ------------------------------------------------------------------ routing

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions)

    def shard_for(self, transactional_id: str) -> TxnShard:
        return self._runtime.shard(self.partition_for(transactional_id))  # type: ignore[return-value]

    def shards(self) -> list[TxnShard]:
        return self._runtime.shards()  # type: ignore[return-value]

    def _run(self, transactional_id: str, op: Callable[[TxnShard, Any, int], Effects],
             on_error: Callable[[ErrorCode], dict]) -> asyncio.Future[dict]:
        return self._runtime.run(self.partition_for(transactional_id), op, on_error)

    # ------------------------------------------------------------------ APIs

    def init_producer_id(self, transactional_id: str, timeout_ms: int,
                         expected: ExpectedProducer | None) -> asyncio.Future[dict] | dict:
        from groupcoord.coordinator.transactions.shard import init_error  # imported by the API's module already

        if not transactional_id:
            return init_error(ErrorCode.invalid_request)
        self.ensure_active()
        if timeout_ms <= 0 or timeout_ms > self.config.transaction_max_timeout_ms:
            return init_error(ErrorCode.invalid_transaction_timeout)
        return self._run(transactional_id, lambda s, t, now: s.init_producer_id(transactional_id, timeout_ms, expected, t, now),
                         init_error)

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: Iterable[TopicPartition]) -> asyncio.Future[dict] | dict:
        """{"error_code"} for all the partitions (Kafka adds them all or none)."""
        if not transactional_id:
            return {"error_code": ErrorCode.invalid_request}
        partitions = list(partitions)
        return self._run(transactional_id,
                         lambda s, t, now: s.add_partitions(transactional_id, producer_id, producer_epoch, partitions, t, now),
                         lambda e: {"error_code": e})

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: Iterable[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        partitions = list(partitions)
        if not transactional_id:
            return {tp: ErrorCode.invalid_request for tp in partitions}
        return self.shard_for(transactional_id).verify_partitions(transactional_id, producer_id, producer_epoch, partitions)

    async def verifier(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        """What the data plane calls before a transactional Produce (transaction.partition.verification.enable),
        answered as Kafka's AddPartitionsToTxnManager answers a partition leader: a fenced producer hears
        INVALID_PRODUCER_EPOCH (what producers expect from a write), not PRODUCER_FENCED."""
        if not self.config.transaction_partition_verification_enable:
            return {tp: ErrorCode.none for tp in partitions}
        return {tp: ErrorCode.invalid_producer_epoch if e == ErrorCode.producer_fenced else e
                for tp, e in self.verify_partitions(transactional_id, producer_id, producer_epoch, partitions).items()}

    def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                        commit: bool) -> asyncio.Future[dict] | dict:
        if not transactional_id:
            return {"throttle_time": 0, "error_code": ErrorCode.invalid_request}
        return self._run(transactional_id,
                         lambda s, t, now: s.end_transaction(transactional_id, producer_id, producer_epoch, commit, t, now),
                         lambda e: {"throttle_time": 0, "error_code": e})

    def describe(self, transactional_ids: list[str]) -> list[dict]:
        return [self.shard_for(tid).describe(tid) if tid else {**self.shards()[0].describe(""), "transactional_id": tid}
                for tid in transactional_ids]

    def list_transactions(self, state_names: set[str], producer_ids: set[int], duration_ms: int) -> dict:
        unknown = sorted(n for n in state_names if TxnState.from_name(n) is None)
        if not self._active and self._activating is None:
            # No __transaction_state yet: no transactions (Kafka's coordinator owns no partition then).
            return {"throttle_time": 0, "error_code": ErrorCode.none, "unknown_state_filters": unknown,
                    "transaction_states": []}
        if any(shard.loading for shard in self.shards()):
            return {"throttle_time": 0, "error_code": ErrorCode.coordinator_load_in_progress,
                    "unknown_state_filters": unknown, "transaction_states": []}
        now = self.clock.wall_ms()
        states = [row for shard in self.shards() for row in shard.list(state_names, producer_ids, duration_ms, now)]
        return {"throttle_time": 0, "error_code": ErrorCode.none, "unknown_state_filters": unknown,
                "transaction_states": states}

    # ------------------------------------------------------------------ markers

    def _markers_token(self, metadata: TransactionMetadata) -> asyncio.Future:
        """A future the shard's Effects resolve once the prepare record is durable; then the markers go out."""
        future = asyncio.get_running_loop().create_future()

        def durable(f: asyncio.Future) -> None:
            if f.cancelled() or f.result().get("error_code", 0) != ErrorCode.none:
                return  # not durable: the shard reloads from its log, and start-up recovery will see it
            self._send_markers(metadata)

        future.add_done_callback(durable)
        return future

    def _send_markers(self, metadata: TransactionMetadata) -> None:
        key = (metadata.transactional_id, metadata.producer_id, metadata.producer_epoch)
        if key in self._writing:
            return
        self._writing.add(key)
        task = asyncio.get_running_loop().create_task(self._write_markers(metadata),
                                                      name=f"txn-markers-{metadata.transactional_id}")
        self._marker_tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self._marker_tasks.discard(t)
            self._writing.discard(key)

        task.add_done_callback(done)

    async def _write_markers(self, metadata: TransactionMetadata) -> None:
        from groupcoord.coordinator.transactions.markers import GIVE_UP, Marker

        committed = metadata.state is TxnState.PREPARE_COMMIT
        remaining = set(metadata.partitions)
        backoff = MARKER_RETRY_BACKOFF_S
        while remaining:
            marker = Marker(metadata.producer_id, metadata.producer_epoch, COORDINATOR_EPOCH, committed,
                            tuple(sorted(remaining)))
            try:
                results = await self.markers.write(marker)
            except Exception as exc:  # a failed write is retried, as Kafka's marker channel retries
                _log.warning("transaction marker write failed; retrying", transactional_id=metadata.transactional_id,
                             error=repr(exc))
                results = {}
            for tp, error in results.items():
                if error == ErrorCode.none or error in GIVE_UP:
                    if error in GIVE_UP:
                        _log.info("dropping the marker of a partition that no longer exists", partition=f"{tp[0]}-{tp[1]}",
                                  transactional_id=metadata.transactional_id)
                    remaining.discard(tp)
            if remaining:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MARKER_RETRY_BACKOFF_MAX_S)
        tid = metadata.transactional_id
        await self._run(tid, lambda s, t, now: s.complete(tid, metadata.producer_id, metadata.producer_epoch, t, now),
                        lambda e: {"error_code": e})

    async def wait_for_markers(self) -> None:
        """Tests and shutdown: until every marker task in flight is done."""
        while self._marker_tasks:
            await asyncio.gather(*list(self._marker_tasks), return_exceptions=True)

    # ------------------------------------------------------------------ operations / metrics

    def iter_transactions(self) -> Iterator[TransactionMetadata]:
        for shard in self.shards():
            yield from list(shard.txns.values())

    def ongoing_count(self) -> int:
        return sum(1 for m in self.iter_transactions() if m.has_pending_transaction)
