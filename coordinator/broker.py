"""The broker assembled: storage, group coordinator, data plane, server, metrics — and the embedded API.

`Broker` is what the daemon runs and what tests and applications embed:

    async with Broker(listen="127.0.0.1:0") as b:          # inside an event loop
        connect(b.bootstrap_servers)

    with run_in_thread(listen="127.0.0.1:0") as b:         # from synchronous code
        KafkaConsumer(bootstrap_servers=b.bootstrap_servers)

Without a `data_dir` an embedded broker keeps its logs in a temporary directory removed on stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import structlog

from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager

from .apis.registry import register_apis
from .apis.services import Services
from .cluster import ClusterIdentity, load_or_create_cluster_id
from .config import BrokerConfig
from .ops.data_dir_lock import DataDirLock
from .ops.logging import use_standard_logging_unless_configured
from .dataplane.service import DataPlane
from .dataplane.group_configs import GroupConfigSource
from .groups.service import GroupCoordinatorService
from .metrics import BrokerMetrics
from .security.credentials import CredentialStore
from .quotas.managers import QuotaManagers
from .quotas.store import ClientQuotaStore
from .quotas.throttling import Throttler
from .server import listener_security
from .server.dispatch import Dispatcher
from .server.listeners import Listener, configured_listeners
from .server.file_sender import sends_regions
from .server.server import KafkaServer
from .transactions.service import TransactionCoordinator
from .share.coordinator_service import ShareCoordinator
from .share.partition_manager import SharePartitionManager
from .share.offsets_admin import ShareOffsetsAdmin
from .share.persister import SharePersister

if TYPE_CHECKING:
    from .security.authorizer import Authorizer

_NONE: dict[str, str] = {}

log = structlog.get_logger("groupcoord.broker")

EMBEDDED_DEFAULTS: dict[str, Any] = {"listen": "127.0.0.1:0", "metrics_port": 0, "data_dir": ""}


def embedded_config(config: BrokerConfig | None = None, **overrides: Any) -> BrokerConfig:
    base = config if config is not None else BrokerConfig().replace(**EMBEDDED_DEFAULTS)
    return base.replace(**overrides) if overrides else base


class Broker:
    def __init__(self, config: BrokerConfig | None = None, **overrides: Any) -> None:
        use_standard_logging_unless_configured()  # an embedding application's logging levels apply
        self.config = embedded_config(config, **overrides)
        self._temp_dir: Path | None = None
        self._lock: DataDirLock | None = None
        self.server: KafkaServer | None = None
        self.dispatcher: Dispatcher | None = None
        self.metrics: BrokerMetrics | None = None
        self.log_manager: LogManager | None = None
        self.dataplane: DataPlane | None = None
        self.groups: GroupCoordinatorService | None = None
        self.authorizer: Authorizer | None = None
        self.credentials: CredentialStore | None = None
        self.quotas: ClientQuotaStore | None = None
        self.listeners: list[Listener] = []
        self.transactions: TransactionCoordinator | None = None
        self.share_coordinator: ShareCoordinator | None = None
        self.share_persister: SharePersister | None = None
        self.share_partitions: SharePartitionManager | None = None
        self.host = ""
        self.port = 0
        self.metrics_port = 0
        self.started_at = 0.0
        self.startup_seconds = 0.0

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def bootstrap_for(self, listener: str) -> str:
        """The bound address of one named listener (``SASL_SSL``), as a client of it connects."""
        for l in self.listeners:
            if l.name == listener.upper():
                return f"{l.advertised_host}:{l.advertised_port}"
        raise KeyError(f"no listener named {listener}")

    @property
    def data_dir(self) -> Path:
        return self._temp_dir or self.config.data_path

    def _wire_share_groups(self) -> None:
        """The group side of share groups calls the persister (initialise/delete state) and tells the share
        partitions when a member leaves or is fenced (what it held is delivered again) and when a share group
        is deleted (its cached share partitions and sessions go)."""
        groups, partitions = self.groups, self.share_partitions
        self.server.close_listeners.append(partitions.on_connection_closed)
        if hasattr(groups, "share_persister"):
            groups.share_persister = self.share_persister
        if hasattr(groups, "share_member_listener"):
            def member_gone(group_id: str, member_id: str) -> None:
                partitions.sessions.remove_member(group_id, member_id)
                asyncio.ensure_future(partitions.release_member(group_id, member_id))
            groups.share_member_listener = member_gone
        if hasattr(groups, "share_group_deleted_listener"):
            # DeleteGroups of a share group deleted its state: its cached share partitions and sessions go too.
            def group_deleted(group_id: str) -> None:
                partitions.forget(group_id)
                for member_id in [m for g, m in list(partitions.sessions.sessions) if g == group_id]:
                    partitions.sessions.remove_member(group_id, member_id)
            groups.share_group_deleted_listener = group_deleted

    async def start(self, on_serving: Callable[[], None] | None = None) -> "Broker":
        """Bind, open the logs, then load the coordinator shards while already serving: a shard that is
        still replaying answers COORDINATOR_LOAD_IN_PROGRESS, as Kafka's does. Returns once they are
        loaded; ``on_serving`` is called as soon as connections are accepted and every API answers (the
        daemon says ``listening on`` then). A start that fails part way releases what it took (the port,
        the data directory lock, open logs)."""
        try:
            return await self._start(on_serving)
        except BaseException:
            await self.stop()
            raise

    async def _start(self, on_serving: Callable[[], None] | None = None) -> "Broker":
        t0 = time.perf_counter()
        if not self.config.data_dir:
            import tempfile  # an embedded broker's throw-away data: tempfile (and random) cost the daemon's start ~1 %

            self._temp_dir = Path(tempfile.mkdtemp(prefix="groupcoord-"))
            self.config = self.config.replace(data_dir=str(self._temp_dir))
        cfg = self.config
        data_dir = self.data_dir
        self._lock = DataDirLock(data_dir).acquire()
        cluster_id = load_or_create_cluster_id(data_dir, cfg.node_id, cfg.cluster_id)

        self.metrics = BrokerMetrics()
        self.dispatcher = Dispatcher(observer=self.metrics)
        self.credentials = CredentialStore.open(data_dir)
        security = [listener_security.build(cfg, listener, self.credentials, self.metrics)
                    for listener in configured_listeners(cfg)]
        self.server = KafkaServer(cfg, self.dispatcher, observer=self.metrics, security=security)
        host, port = await self.server.start(serve=False)
        self.host, self.port = host, port
        self.listeners = list(self.server.listeners)
        first = self.listeners[0]
        if cfg.listen_port == 0 or not cfg.listeners:
            # From here on every part of the broker (FindCoordinator, Metadata) names the real port.
            adv = None if cfg.advertised is None else f"{first.advertised_host}:{first.advertised_port}"
            self.config = cfg = cfg.replace(listen=f"{host}:{port}", advertised=adv)
            self.server.config = cfg
        identity = ClusterIdentity(cfg.node_id, first.advertised_host, first.advertised_port, cluster_id)
        identities = {l.name: ClusterIdentity(cfg.node_id, l.advertised_host, l.advertised_port, cluster_id)
                      for l in self.listeners}

        self.log_manager = LogManager(
            data_dir,
            FsyncPolicy(cfg.fsync.value),
            broker_log_config(cfg),
            observer=self.metrics,
            cleaner_backoff_s=cfg.log_cleaner_backoff_ms / 1000,
            retention_check_interval_s=cfg.log_retention_check_interval_ms / 1000,
            cleaner_io_bytes_per_second=cfg.log_cleaner_io_max_bytes_per_second,
            max_open_files=cfg.log_max_open_files,
            syncfs_min_files=cfg.log_flush_syncfs_min_partitions,
            flush_checkpoint_interval_s=cfg.log_flush_offset_checkpoint_interval_ms / 1000,
        )
        self.dataplane = DataPlane(cfg, self.log_manager, observer=self.metrics)
        await self.dataplane.start()
        self.groups = GroupCoordinatorService(cfg, self.log_manager, self.dataplane.topics, observer=self.metrics,
                                             topic_defaults=broker_log_config(cfg))
        dynamic = self.dataplane.dynamic_configs
        self.groups.use_group_configs(GroupConfigSource(cfg, lambda group_id: dynamic.groups.get(group_id, _NONE)))
        self.authorizer = _authorizer_from_config(cfg, data_dir, self.metrics)
        if self.authorizer is not None:
            self.groups.filter_regex_topics(self.authorizer.visible_to_member)
        dataplane = self.dataplane
        # Producer ids come from the one allocator (its persisted blocks), the idempotent path's.
        self.transactions = TransactionCoordinator(
            cfg, self.log_manager, self.groups, lambda: dataplane.init_producer_id(None, -1, -1)["producer_id"],
            observer=self.metrics, topic_defaults=broker_log_config(cfg))

        async def write_data_markers(producer_id: int, producer_epoch: int, coordinator_epoch: int, committed: bool,
                                     partitions: list[tuple[str, int]]) -> dict[tuple[str, int], Any]:
            from .dataplane.txn_markers import TxnMarker  # with the markers' writer, on first use (DataPlane)

            return await dataplane.write_txn_markers(
                [TxnMarker(producer_id, producer_epoch, coordinator_epoch, committed, list(partitions))])

        self.transactions.set_data_marker_writer(write_data_markers)
        if cfg.transaction_partition_verification_enable:
            dataplane.set_transaction_verifier(self.transactions.verifier)
        catalog = self.dataplane.topics

        def share_partition_exists(topic_id: Any, partition: int) -> bool:
            topic = catalog.by_id(topic_id)
            return topic is not None and 0 <= partition < topic.partitions

        self.share_coordinator = ShareCoordinator(cfg, self.log_manager, partition_exists=share_partition_exists,
                                                  topic_defaults=broker_log_config(cfg))
        self.share_persister = SharePersister(self.share_coordinator)
        self.share_partitions = SharePartitionManager(cfg, self.share_persister, self.dataplane)
        self._wire_share_groups()
        self.quotas = self._open_client_quotas(data_dir)
        register_apis(self.dispatcher, Services(identity, self.dispatcher.registry, self.dataplane.topics,
                                                self.groups, self.dataplane, credentials=self.credentials,
                                                identities=identities, authorizer=self.authorizer,
                                                transactions=self.transactions,
                                                share_coordinator=self.share_coordinator,
                                                share_partitions=self.share_partitions,
                                                share_persister=self.share_persister,
                                                share_offsets=ShareOffsetsAdmin(self.groups, self.share_persister,
                                                                                catalog, self.share_partitions),
                                                quotas=self.quotas,
                                                sendfile_listeners=frozenset(
                                                    l.name for l in self.listeners if sends_regions(l))))
        self.metrics.attach_state_sources(self.groups, self.dataplane.topics)
        self.metrics.attach_health(self.health)
        self.metrics.attach_transactions(self.transactions)
        self.metrics.attach_share_partitions(self.share_partitions)
        purgatory = self.dataplane.purgatory
        self.metrics.attach_purgatory("fetch", lambda: purgatory.parked)
        self.metrics.attach_fetch_sessions(self.dataplane.fetch_sessions_made)
        await self.server.serve()
        if on_serving is not None:
            on_serving()
        await self.groups.start()
        await self.transactions.start()
        await self.share_coordinator.start()
        if cfg.log_cleaner_enable:
            await self.log_manager.start_background()
        if cfg.metrics_port:
            self.metrics_port = await self.metrics.start_http(cfg.listen_host, max(cfg.metrics_port, 0))
        self.startup_seconds = time.perf_counter() - t0
        self.started_at = time.time()
        log.info("broker started", bootstrap=self.bootstrap_servers, data_dir=str(data_dir),
                 metrics_port=self.metrics_port or None, seconds=round(self.startup_seconds, 4))
        return self

    def _open_client_quotas(self, data_dir: Path) -> ClientQuotaStore:
        """The persisted client quotas and their managers; the server throttles only while a quota exists."""
        cfg = self.config
        managers = QuotaManagers(cfg.quota_window_num, cfg.quota_window_size_seconds)
        throttler = Throttler(managers)
        server = self.server

        def refresh() -> None:
            if server is not None:
                server.quotas = throttler if managers.enabled else None
                server.connection_quotas = managers.connections if managers.connections.enabled else None

        store = ClientQuotaStore.open(data_dir, managers, on_change=refresh)
        refresh()
        if self.metrics is not None:
            self.metrics.attach_quotas(managers)
        return store

    async def stop(self) -> None:
        """Stop accepting, let in-flight requests finish, flush and close every log."""
        if self.dataplane is not None:
            await self.dataplane.stop()  # parked fetches answer now, so connections drain quickly
        if self.server is not None:
            await self.server.stop()
            self.server = None
        if self.transactions is not None:
            await self.transactions.stop()
            self.transactions = None
        if self.share_partitions is not None:
            await self.share_partitions.stop()
            self.share_partitions = None
        if self.share_coordinator is not None:
            await self.share_coordinator.stop()
            self.share_coordinator = None
        if self.groups is not None:
            await self.groups.stop()
            self.groups = None
        if self.log_manager is not None:
            await self.log_manager.stop()
            self.log_manager = None
        if self.metrics_port:
            await self.metrics.stop_http()
            self.metrics_port = 0
        self.dataplane = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None
        if self.started_at:  # a start that failed part way says why once, not that a broker stopped
            log.info("broker stopped", bootstrap=self.bootstrap_servers)

    def health(self) -> dict:
        """Whether the broker can do its job, beyond answering: every write failing now (ENOSPC, EIO), every
        partition offline, every group shard that could not load. Served at the metrics endpoint's /health
        and read by `groupcoord health`, which reports ``checked`` — what was looked at — with the verdict:
        the data directory, how many partition logs, and the group coordinator's shards by load state
        (a shard still loading answers COORDINATOR_LOAD_IN_PROGRESS and clients retry: not a problem)."""
        problems: list[dict] = []
        checked: dict = {"data_dir": str(self.data_dir) if self.started_at else None, "partition_logs": 0,
                         "coordinator_partitions": {"loaded": 0, "loading": 0, "unavailable": 0}}
        manager = self.log_manager
        if manager is not None:
            checked["partition_logs"] = len(manager.logs)
            for (topic, partition), log in sorted(manager.logs.items()):
                failure = getattr(log, "write_failure", None)
                if failure is not None:
                    problems.append({"partition": f"{topic}-{partition}", "problem": "writes failing",
                                     "error": str(failure)})
                elif log.corruption is not None:
                    problems.append({"partition": f"{topic}-{partition}", "problem": "offline: corrupt",
                                     "error": str(log.corruption)})
            for (topic, partition), exc in sorted(manager.refused.items()):
                problems.append({"partition": f"{topic}-{partition}", "problem": "offline: corrupt", "error": str(exc)})
        if self.groups is not None:
            shards = checked["coordinator_partitions"]
            for shard in self.groups.shards():
                if shard.unavailable is not None:
                    shards["unavailable"] += 1
                    problems.append({"partition": f"__consumer_offsets-{shard.partition}",
                                     "problem": "group shard unavailable", "error": shard.unavailable})
                else:
                    shards["loading" if shard.loading else "loaded"] += 1
        return {"healthy": not problems, "problems": problems, "checked": checked}

    async def __aenter__(self) -> "Broker":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()


def _authorizer_from_config(cfg: BrokerConfig, data_dir: Path, observer: Any) -> "Authorizer | None":
    """``security.authorizer.authorizer_from_config``, whose module (and the ACL model's enums and dataclasses)
    is imported only when ``authorizer.class.name`` is set: without it there is no authorizer, and a daemon's
    start-up does not pay for one (the ACL APIs import the model when first asked)."""
    if not (getattr(cfg, "authorizer_class_name", "") or "").strip():
        return None
    from .security.authorizer import authorizer_from_config

    return authorizer_from_config(cfg, data_dir, observer=observer)


def broker_log_config(cfg: BrokerConfig) -> LogConfig:
    """Topic defaults from the broker's log.* settings (a topic's own configs override them)."""
    return LogConfig.from_topic_configs(
        {
            "segment.bytes": str(cfg.log_segment_bytes),
            "segment.ms": str(cfg.log_roll_ms),
            "retention.ms": str(cfg.log_retention_ms),
            "retention.bytes": str(cfg.log_retention_bytes),
            "index.interval.bytes": str(cfg.log_index_interval_bytes),
            "delete.retention.ms": str(cfg.log_cleaner_delete_retention_ms),
            "min.cleanable.dirty.ratio": str(cfg.log_cleaner_min_cleanable_ratio),
            "min.compaction.lag.ms": str(cfg.log_cleaner_min_compaction_lag_ms),
            "max.compaction.lag.ms": str(cfg.log_cleaner_max_compaction_lag_ms),
            "max.message.bytes": str(cfg.message_max_bytes),
        }
    )


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop where installed (the design card's loop), else asyncio's own, said once in the log."""
    try:
        import uvloop
    except ImportError:
        log.warning("uvloop is not installed; using the default asyncio event loop")
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


@contextlib.contextmanager
def run_in_thread(config: BrokerConfig | None = None, **overrides: Any) -> Iterator[Broker]:
    """Run a broker on its own event loop in a background thread, for synchronous code and tests."""
    broker = Broker(config, **overrides)
    loop = new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(broker.start())
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="groupcoord-broker", daemon=True)
    thread.start()
    started.wait()
    if failure:
        thread.join()
        loop.close()
        raise failure[0]
    try:
        yield broker
    finally:
        asyncio.run_coroutine_threadsafe(broker.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()
