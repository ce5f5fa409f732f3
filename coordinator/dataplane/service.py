"""DataPlane: the topics, Produce, Fetch, ListOffsets, InitProducerId, DescribeConfigs, DescribeProducers
and transaction-marker services wired to one LogManager, one clock, one fetch purgatory, one fetch session
cache and one producer-state table.
"""
from __future__ import annotations

import asyncio
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.traffic import NO_TRAFFIC_OBSERVER, TrafficObserver
from groupcoord.coordinator.clock import Clock, SystemClock, TimerHandle
from groupcoord.coordinator.dataplane.dynamic_configs import DynamicConfigs
from groupcoord.coordinator.dataplane.fetch_purgatory import FetchPurgatory
from groupcoord.coordinator.dataplane.producer_states import ProducerStates
from groupcoord.coordinator.dataplane.producer_ids import ProducerIdAllocator
from groupcoord.coordinator.dataplane.topics import Topic, TopicCatalog
from groupcoord.coordinator.first_use import made

if TYPE_CHECKING:
    from groupcoord.coordinator.dataplane.produce import ProduceService, TransactionVerifier
    from groupcoord.coordinator.dataplane.txn_markers import TxnMarker, TxnMarkerWriter
    from groupcoord.coordinator.dataplane.config_changes import ConfigChangeService
    from groupcoord.coordinator.dataplane.configs import DescribeConfigsService
    from groupcoord.coordinator.dataplane.delete_records import DeleteRecordsService
    from groupcoord.coordinator.dataplane.describe_producers import DescribeProducersService
    from groupcoord.coordinator.dataplane.fetch import FetchService
    from groupcoord.coordinator.dataplane.fetch_sessions import FetchSessionCache
    from groupcoord.coordinator.dataplane.list_offsets import ListOffsetsService
    from groupcoord.coordinator.dataplane.log_dirs import LogDirsService

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


class DataPlane:
    """The data plane's services. Those only an API's requests use (Produce, Fetch and its sessions, ListOffsets,
    DescribeProducers, DescribeConfigs, config changes, DeleteRecords, DescribeLogDirs) and the transaction markers'
    writer (WriteTxnMarkers, the transaction coordinator's markers) are made, and their modules imported, on first
    use (``cached_property``): none is needed to start, and together they were ~7 % of the daemon's start-up
    imports. The daemon's warm-up (apis/warm_up.py) imports the common ones' modules soon after it listens."""

    def __init__(self, config: Any, log_manager: Any, clock: Clock | None = None,
                 observer: TrafficObserver = NO_TRAFFIC_OBSERVER) -> None:
        self.config = config
        self.log_manager = log_manager
        self.clock = clock or SystemClock()
        self._observer = observer
        self._data_dir = data_dir = Path(config.data_dir)
        self.purgatory = FetchPurgatory(self.clock)
        self.producer_states = ProducerStates(self.clock, config.producer_id_expiration_ms)
        self._producer_expiry: TimerHandle | None = None
        # The log each partition's append listener is attached to, held (not its id(): a freed log's
        # address is reused by the next one, which then got no listener) and dropped when the topic goes.
        self._listening: dict[tuple[str, int], Any] = {}
        self.dynamic_configs = DynamicConfigs(data_dir, config.node_id)
        self.topics = TopicCatalog(config, log_manager, data_dir, on_log_opened=self._listen,
                                   on_topic_deleted=self._topic_deleted, dynamic=self.dynamic_configs)
        self._verifier: TransactionVerifier | None = None
        self._producer_ids = ProducerIdAllocator(data_dir)

    @cached_property
    def produce(self) -> ProduceService:
        from groupcoord.coordinator.dataplane.produce import ProduceService

        service = ProduceService(self.topics, self.clock, self.producer_states, self._observer)
        service.verifier = self._verifier
        return service

    @cached_property
    def txn_markers(self) -> TxnMarkerWriter:
        from groupcoord.coordinator.dataplane.txn_markers import TxnMarkerWriter

        return TxnMarkerWriter(self.topics, self.producer_states, self.clock, self.purgatory.notify)

    @cached_property
    def fetch_sessions(self) -> FetchSessionCache:
        from groupcoord.coordinator.dataplane.fetch_sessions import FetchSessionCache

        return FetchSessionCache(self.config.max_incremental_fetch_session_cache_slots,
                                 self.config.min_incremental_fetch_session_eviction_ms, self.clock)

    def fetch_sessions_made(self) -> FetchSessionCache | None:
        """The session cache if the first Fetch has made it, else None (what a metrics scrape reads)."""
        return made(self, "fetch_sessions")

    @cached_property
    def fetch(self) -> FetchService:
        from groupcoord.coordinator.dataplane.fetch import FetchService
        from groupcoord.coordinator.dataplane.fetch_sessions import FetchManager

        return FetchService(self.topics, self.purgatory, self.clock, FetchManager(self.fetch_sessions),
                            self._observer, self.producer_states, self.config.fetch_busy_linger_ms)

    @cached_property
    def list_offsets(self) -> ListOffsetsService:
        from groupcoord.coordinator.dataplane.list_offsets import ListOffsetsService

        return ListOffsetsService(self.topics, self.producer_states)

    @cached_property
    def describe_producers(self) -> DescribeProducersService:
        from groupcoord.coordinator.dataplane.describe_producers import DescribeProducersService

        return DescribeProducersService(self.topics, self.producer_states)

    @cached_property
    def describe_configs(self) -> DescribeConfigsService:
        from groupcoord.coordinator.dataplane.configs import DescribeConfigsService

        return DescribeConfigsService(self.topics, self.config)

    @cached_property
    def config_changes(self) -> ConfigChangeService:
        from groupcoord.coordinator.dataplane.config_changes import ConfigChangeService

        return ConfigChangeService(self.topics, self.dynamic_configs, self.config)

    @cached_property
    def delete_records(self) -> DeleteRecordsService:
        from groupcoord.coordinator.dataplane.delete_records import DeleteRecordsService

        return DeleteRecordsService(self.topics, self.log_manager)

    @cached_property
    def log_dirs(self) -> LogDirsService:
        from groupcoord.coordinator.dataplane.log_dirs import LogDirsService

        return LogDirsService(self._data_dir, self.log_manager)

    async def start(self) -> None:
        """Open the logs on disk (LogManager.open_existing skips those already open) and load the topic
        catalog, adopting topics whose logs exist without a catalog entry."""
        existing = await self.log_manager.open_existing()
        await self.topics.load(existing.values())
        if self._producer_expiry is None:
            self._schedule_producer_expiry()

    async def stop(self) -> None:
        """Answer every parked fetch now, so connections can drain before the logs close, and snapshot the
        producer tables so the next start need not replay the logs."""
        if self._producer_expiry is not None:
            self._producer_expiry.cancel()
            self._producer_expiry = None
        self.purgatory.wake_all()
        self.producer_states.write_snapshots(self.topics.log)

    def init_producer_id(self, transactional_id: str | None, producer_id: int, producer_epoch: int) -> dict:
        """InitProducerId for idempotent producers: a fresh id at epoch 0 every time, as Kafka's
        transaction coordinator answers when there is no transactional id."""
        if (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
            return {"throttle_time": 0, "error_code": ErrorCode.invalid_request,
                    "producer_id": NO_PRODUCER_ID, "producer_epoch": NO_PRODUCER_EPOCH}
        if transactional_id is not None:
            # No transaction coordinator: answer as a Kafka whose __transaction_state cannot be created.
            return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                    "producer_id": NO_PRODUCER_ID, "producer_epoch": NO_PRODUCER_EPOCH}
        return {"throttle_time": 0, "error_code": ErrorCode.none,
                "producer_id": self._producer_ids.next_id(), "producer_epoch": 0}

    async def write_txn_markers(self, markers: list[TxnMarker]) -> dict[tuple[str, int], ErrorCode]:
        """Append each transaction's COMMIT/ABORT marker to its data partitions, durable when this returns,
        and apply it (producer state, last stable offset, ``.txnindex``); the error of each partition."""
        return await self.txn_markers.write(markers)

    def set_transaction_verifier(self, verifier: TransactionVerifier | None) -> None:
        """The transaction coordinator's partition check for transactional Produce (None: no check): kept for
        the Produce service when its first request makes it, and given to it if made already."""
        self._verifier = verifier
        produce = made(self, "produce")
        if produce is not None:
            produce.verifier = verifier

    def _schedule_producer_expiry(self) -> None:
        """Kafka's PeriodicProducerExpirationCheck: every producer.id.expiration.check.interval.ms, first
        one interval after start."""
        self._producer_expiry = self.clock.call_later(self.config.producer_id_expiration_check_interval_ms,
                                                      self._expire_producers)

    def _expire_producers(self) -> None:
        self.producer_states.remove_expired()
        self._schedule_producer_expiry()

    def _listen(self, log: Any) -> None:
        """Wake the fetches parked on this partition whenever its log is appended to; once per log object."""
        key = (log.topic, log.partition)
        if self._listening.get(key) is log:
            return
        self._listening[key] = log
        log.add_append_listener(lambda _log: self.purgatory.notify(key))
        log.first_unstable_offset = lambda: self._first_unstable(key)

    def _first_unstable(self, key: tuple[str, int]) -> int | None:
        """For the cleaner: the partition's first undecided transaction offset. While its producer table is
        not loaded the answer is unknown (LookupError: nothing is cleaned) and the table is loaded now, so a
        later pass can clean."""
        state = self.producer_states.loaded(*key)
        if state is None:
            log = self.topics.log(*key)
            if log is not None:
                try:
                    task = asyncio.ensure_future(self.producer_states.state_for(log))
                except RuntimeError:     # asked off the event loop: the next pass on it loads the table
                    raise LookupError(key) from None
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
            raise LookupError(key)
        return state.first_unstable_offset()

    def _topic_deleted(self, topic: Topic) -> None:
        self.producer_states.drop_topic(topic.name)
        for partition in range(topic.partitions):
            self._listening.pop((topic.name, partition), None)
            self.purgatory.wake_all((topic.name, partition))
