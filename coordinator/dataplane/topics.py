"""The topic catalog: which topics exist, their ids, partition counts and config overrides.

The catalog file (``topic-catalog.json`` in the data directory, replaced atomically) is the authority for
names, partition counts and overrides; each partition directory also carries Kafka's
``partition.metadata`` with the topic id. Topics whose logs were created directly through the
LogManager (``__consumer_offsets`` by the group coordinator) are adopted on first sight, so Metadata and
Fetch see them like any other topic.

Start-up writes nothing when nothing changed (the catalog is rewritten only when a topic is adopted, and
``partition.metadata`` only when its id differs), so a broker on a full disk still starts. The number of
partitions a broker hosts is capped (``max.broker.partitions``, KIP-578's name): CreateTopics and
CreatePartitions past it are refused with POLICY_VIOLATION, before any directory is created.
"""
from __future__ import annotations

import asyncio
import json
import uuid

import structlog
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.storage.config import InvalidConfigError, LogConfig

from groupcoord.coordinator.dataplane import topic_configs
from groupcoord.coordinator.dataplane.atomic_json import write_json_atomically
from groupcoord.coordinator.dataplane.names import collision_key, is_internal, topic_name_error
from groupcoord.coordinator.dataplane.topic_ids import random_topic_id, read_partition_metadata, write_partition_metadata
from groupcoord.protocol.frozen import frozen_dataclass

CATALOG_FILE = "topic-catalog.json"

_log = structlog.get_logger("groupcoord.coordinator.dataplane.topics")


@dataclass
class Topic:
    """A topic in the catalog: id, partition count, its config overrides and the log config they give."""
    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str]              # overrides set at creation; the rest come from the broker
    log_config: LogConfig

    @property
    def is_internal(self) -> bool:
        return is_internal(self.name)

    @property
    def timestamp_window_ms(self) -> tuple[int, int] | None:
        """(before, after) bounds on CreateTime timestamps at their effective values (the topic's, the broker's, or
        Kafka 4's defaults: unbounded before, an hour after), or None when both are unbounded."""
        before = self.log_config.message_timestamp_before_max_ms
        after = self.log_config.message_timestamp_after_max_ms
        if before == after == topic_configs.LONG_MAX:
            return None
        return before, after


@frozen_dataclass
class TopicInfo:
    """What Metadata reports for one requested topic."""
    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: int
    error_code: ErrorCode = ErrorCode.none
    error_message: str | None = None


@frozen_dataclass
class TopicResult:
    """The outcome of one create/delete/create-partitions on one topic."""
    name: str | None
    error: ErrorCode = ErrorCode.none
    message: str | None = None
    topic: Topic | None = None


class TopicCatalog:
    def __init__(self, config: Any, log_manager: Any, data_dir: Path,
                 on_log_opened: Callable[[Any], None] | None = None,
                 on_topic_deleted: Callable[[Topic], None] | None = None, dynamic: Any = None) -> None:
        self._config = config
        self.dynamic = dynamic  # DynamicConfigs: broker-level dynamic settings are topic defaults too
        self._log_manager = log_manager
        self._path = Path(data_dir) / CATALOG_FILE
        self._topics: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self._deleting: set[str] = set()       # logs still on disk, but never to be adopted again
        self._creating: set[str] = set()       # logs being opened; listed only once all of them are
        self._lock = asyncio.Lock()
        self._on_log_opened = on_log_opened or (lambda _log: None)
        self._on_topic_deleted = on_topic_deleted or (lambda _topic: None)

    # ---- start-up --------------------------------------------------------------------------------

    async def load(self, existing_logs: Iterable[Any] = ()) -> None:
        """Read the catalog, reopen or recreate every partition it lists, adopt logs it does not list."""
        if self._path.exists():
            data = json.loads(self._path.read_text())
            for name, entry in data.get("topics", {}).items():
                topic = self._make_topic(name, uuid.UUID(entry["topic_id"]), int(entry["partitions"]),
                                         dict(entry.get("configs", {})))
                self._index(topic)
                for partition in range(topic.partitions):
                    if not self._offline(name, partition):  # a corrupt log, already reported by the log manager
                        await self._open_partition(topic, partition)
        for log in existing_logs:
            if log.topic not in self._topics:
                self._adopt(log.topic)

    # ---- lookups (synchronous: the group coordinator and handlers call them on the hot path) ----

    def get(self, name: str) -> Topic | None:
        topic = self._topics.get(name)
        if (topic is None and name not in self._deleting and name not in self._creating
                and self._log_manager.get(name, 0) is not None):
            topic = self._adopt(name)
        return topic

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id)

    def names(self) -> list[str]:
        for name in self._log_manager.topics() - self._topics.keys() - self._deleting - self._creating:
            self._adopt(name)
        return sorted(self._topics)

    def partition_count(self, name: str) -> int | None:
        topic = self.get(name)
        return None if topic is None else topic.partitions

    def _offline(self, topic: str, partition: int) -> bool:
        return (topic, partition) in getattr(self._log_manager, "refused", {})

    def missing_partition_error(self, topic: str, partition: int) -> ErrorCode:
        """Why ``log(topic, partition)`` is None: a partition that is offline because its log is corrupt answers
        KAFKA_STORAGE_ERROR, as Kafka answers for a partition on a failed log directory; otherwise it is unknown."""
        if self._offline(topic, partition):
            return ErrorCode.kafka_storage_error
        return ErrorCode.unknown_topic_or_partition

    def log(self, topic: str, partition: int) -> Any | None:
        """The partition's PartitionLog, or None when the topic or partition does not exist."""
        known = self.get(topic)
        if known is None or not 0 <= partition < known.partitions:
            return None
        return self._log_manager.get(topic, partition)

    # ---- Metadata --------------------------------------------------------------------------------

    async def describe(self, names: list[str] | None, auto_create: bool) -> list[TopicInfo]:
        """Metadata's view. ``names=None`` lists every topic; unknown names are auto-created when
        ``auto_create`` (the request's allow_auto_topic_creation) and auto.create.topics.enable agree."""
        if names is None:
            return [self._info(self._topics[n]) for n in self.names()]
        infos = []
        for name in names:
            topic = self.get(name)
            if topic is not None:
                infos.append(self._info(topic))
                continue
            error = topic_name_error(name)
            if error is not None:
                infos.append(self._missing(name, ErrorCode.invalid_topic_exception, error))
                continue
            if auto_create and self._config.auto_create_topics_enable and not is_internal(name):
                result = await self.create(name)
                if result.topic is not None:
                    infos.append(self._info(result.topic))
                    continue
                if result.error is ErrorCode.topic_already_exists and self.get(name) is not None:
                    infos.append(self._info(self.get(name)))
                    continue
                infos.append(self._missing(name, result.error, result.message))
                continue
            infos.append(self._missing(name, ErrorCode.unknown_topic_or_partition, None))
        return infos

    async def ensure(self, name: str) -> TopicResult:
        """Produce's lookup: the topic, auto-created if the broker allows it."""
        topic = self.get(name)
        if topic is not None:
            return TopicResult(name, topic=topic)
        if topic_name_error(name) is None and self._config.auto_create_topics_enable and not is_internal(name):
            result = await self.create(name)
            if result.topic is not None or self.get(name) is None:
                return result
            return TopicResult(name, topic=self.get(name))
        return TopicResult(name, ErrorCode.unknown_topic_or_partition,
                           "This server does not host this topic-partition.")

    # ---- CreateTopics / DeleteTopics / CreatePartitions -----------------------------------------

    async def create(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     configs: dict[str, str | None] | None = None,
                     assignments: dict[int, list[int]] | None = None,
                     validate_only: bool = False) -> TopicResult:
        async with self._lock:
            checked = self._validate_create(name, num_partitions, replication_factor, configs or {},
                                            assignments or {})
            if isinstance(checked, TopicResult):
                return checked
            partitions, overrides = checked
            refusal = self._over_partition_cap(name, partitions)
            if refusal is not None:
                return refusal
            topic = self._make_topic(name, random_topic_id(), partitions, overrides)
            if validate_only:
                return TopicResult(name, topic=topic)
            # Listed only once every partition is open: a producer or consumer racing the creation sees
            # either no topic (and waits for this creation) or all of it, never a partition without a log.
            self._creating.add(name)
            try:
                for partition in range(partitions):
                    await self._open_partition(topic, partition)
            finally:
                self._creating.discard(name)
            self._index(topic)
            self._persist()
            return TopicResult(name, topic=topic)

    async def delete(self, name: str | None = None, topic_id: uuid.UUID | None = None) -> TopicResult:
        async with self._lock:
            if name is not None and topic_id is not None:
                return TopicResult(name, ErrorCode.invalid_request,
                                   "Topic name and topic id cannot both be specified.")
            topic = self.get(name) if name is not None else self._by_id.get(topic_id)
            if topic is None:
                if name is None:
                    return TopicResult(None, ErrorCode.unknown_topic_id, None)
                return TopicResult(name, ErrorCode.unknown_topic_or_partition,
                                   "This server does not host this topic-partition.")
            if topic.is_internal:
                return TopicResult(topic.name, ErrorCode.topic_authorization_failed,
                                   f"Cannot delete internal topic {topic.name}")
            del self._topics[topic.name]
            self._by_id.pop(topic.topic_id, None)
            self._persist()
            self._deleting.add(topic.name)
            try:
                await self._log_manager.delete_topic(topic.name)
            finally:
                self._deleting.discard(topic.name)
            self._on_topic_deleted(topic)
            return TopicResult(topic.name, topic=topic)

    async def create_partitions(self, name: str, count: int, assignments: list[list[int]] | None,
                                validate_only: bool = False) -> TopicResult:
        async with self._lock:
            topic = self.get(name)
            if topic is None:
                return TopicResult(name, ErrorCode.unknown_topic_or_partition,
                                   f"The topic '{name}' does not exist.")
            if topic.is_internal:
                return TopicResult(name, ErrorCode.topic_authorization_failed,
                                   f"Cannot change the partition count of internal topic {name}")
            if count < topic.partitions:
                return TopicResult(name, ErrorCode.invalid_partitions,
                                   f"The topic {name} currently has {topic.partitions} partition(s); {count} "
                                   "would not be an increase.")
            if count == topic.partitions:
                return TopicResult(name, ErrorCode.invalid_partitions,
                                   f"Topic already has {topic.partitions} partition(s).")
            if assignments is not None:
                if len(assignments) != count - topic.partitions:
                    return TopicResult(name, ErrorCode.invalid_replica_assignment,
                                       f"Attempted to add {count - topic.partitions} additional partition(s), "
                                       f"but only {len(assignments)} assignment(s) were specified.")
                bad = self._bad_assignment(assignments)
                if bad is not None:
                    return TopicResult(name, ErrorCode.invalid_replica_assignment, bad)
            refusal = self._over_partition_cap(name, count - topic.partitions)
            if refusal is not None:
                return refusal
            if validate_only:
                return TopicResult(name, topic=topic)
            for partition in range(topic.partitions, count):  # opened before they are counted, as in create
                await self._open_partition(topic, partition)
            topic.partitions = count
            self._persist()
            return TopicResult(name, topic=topic)

    # ---- internals -------------------------------------------------------------------------------

    def _validate_create(self, name: str, num_partitions: int, replication_factor: int,
                         configs: dict[str, str | None], assignments: dict[int, list[int]],
                         ) -> TopicResult | tuple[int, dict[str, str]]:
        """A refusal, or the partition count and normalised overrides to create the topic with."""
        error = topic_name_error(name)
        if error is not None:
            return TopicResult(name, ErrorCode.invalid_topic_exception, error)
        if name in self._topics or self._log_manager.get(name, 0) is not None:
            return TopicResult(name, ErrorCode.topic_already_exists, f"Topic '{name}' already exists.")
        key = collision_key(name)
        for other in self._topics:
            if collision_key(other) == key:
                return TopicResult(name, ErrorCode.invalid_topic_exception,
                                   f"Topic '{name}' collides with existing topic: {other}")
        if assignments:
            if num_partitions != -1 or replication_factor != -1:
                return TopicResult(name, ErrorCode.invalid_request,
                                   "Both numPartitions or replicationFactor and replicasAssignments were set. "
                                   "Both cannot be used at the same time.")
            if sorted(assignments) != list(range(len(assignments))):
                return TopicResult(name, ErrorCode.invalid_replica_assignment,
                                   "Partitions should be a consecutive 0-based integer sequence")
            bad = self._bad_assignment(list(assignments.values()))
            if bad is not None:
                return TopicResult(name, ErrorCode.invalid_replica_assignment, bad)
            partitions = len(assignments)
        else:
            partitions = self._config.num_partitions if num_partitions == -1 else num_partitions
            if partitions < 1:
                return TopicResult(name, ErrorCode.invalid_partitions,
                                   "Number of partitions was set to an invalid non-positive value.")
            replicas = self._config.default_replication_factor if replication_factor == -1 else replication_factor
            if replicas < 1:
                return TopicResult(name, ErrorCode.invalid_replication_factor,
                                   "Replication factor must be larger than 0, or -1 to use the default value.")
            if replicas > 1:
                return TopicResult(name, ErrorCode.invalid_replication_factor,
                                   f"Unable to replicate the partition {replicas} time(s): The target replication "
                                   f"factor of {replicas} cannot be reached because only 1 broker(s) are "
                                   "registered.")
        try:
            overrides = topic_configs.validate(configs)
            topic_configs.log_config_for(overrides, self._config, self._dynamic_view())
        except InvalidConfigError as exc:
            return TopicResult(name, ErrorCode.invalid_config, str(exc))
        return partitions, overrides

    def hosted_partitions(self) -> int:
        """Partitions this broker hosts: every catalogued topic's, plus logs not catalogued yet
        (``__consumer_offsets`` before its first adoption)."""
        listed = sum(topic.partitions for topic in self._topics.values())
        return listed + sum(1 for topic, _ in self._log_manager.logs if topic not in self._topics)

    def _over_partition_cap(self, name: str, adding: int) -> TopicResult | None:
        cap = getattr(self._config, "max_broker_partitions", None)
        if cap is None:
            return None
        hosted = self.hosted_partitions()
        if hosted + adding <= cap:
            return None
        return TopicResult(name, ErrorCode.policy_violation,
                           f"Adding {adding} partition(s) would make this broker host {hosted + adding} partitions, "
                           f"more than max.broker.partitions={cap} (it hosts {hosted}).")

    def _bad_assignment(self, assignments: Iterable[list[int]]) -> str | None:
        node = self._config.node_id
        for brokers in assignments:
            if list(brokers) != [node]:
                return (f"The manual partition assignment includes broker(s) {list(brokers)}, but only broker "
                        f"{node} exists.")
        return None

    def _make_topic(self, name: str, topic_id: uuid.UUID, partitions: int, overrides: dict[str, str]) -> Topic:
        return Topic(name, topic_id, partitions, overrides,
                     topic_configs.log_config_for(overrides, self._config, self._dynamic_view()))

    def _dynamic_view(self):
        return None if self.dynamic is None else self.dynamic.broker_view()

    # ---- IncrementalAlterConfigs / AlterConfigs ---------------------------------------------------

    async def replace_configs(self, name: str, overrides: dict[str, str]) -> None:
        """Make ``overrides`` the topic's whole set of overrides (already validated), persisted, and the
        logs' config from now on (retention, segment size, compaction, max message size)."""
        async with self._lock:
            topic = self._topics[name]
            topic.configs = dict(overrides)
            topic.log_config = topic_configs.log_config_for(topic.configs, self._config, self._dynamic_view())
            self._persist()
            await self._log_manager.update_config(name, topic.log_config)

    async def refresh_log_configs(self) -> None:
        """Broker-level dynamic settings changed: every topic's effective config is recomputed."""
        async with self._lock:
            for topic in list(self._topics.values()):
                config = topic_configs.log_config_for(topic.configs, self._config, self._dynamic_view())
                if config != topic.log_config:
                    topic.log_config = config
                    await self._log_manager.update_config(topic.name, config)

    def _index(self, topic: Topic) -> None:
        self._topics[topic.name] = topic
        self._by_id[topic.topic_id] = topic

    async def _open_partition(self, topic: Topic, partition: int) -> None:
        log = await self._log_manager.get_or_create(topic.name, partition, topic.log_config)
        if read_partition_metadata(log.directory) != topic.topic_id:
            write_partition_metadata(log.directory, topic.topic_id)
        self._on_log_opened(log)

    def _adopt(self, name: str) -> Topic:
        """Take in a topic whose logs exist but which the catalog does not list."""
        logs = self._log_manager.partitions(name)
        topic_id = next((i for i in (read_partition_metadata(log.directory) for log in logs) if i), None)
        topic_id = topic_id or random_topic_id()
        topic = Topic(name, topic_id, len(logs), {}, logs[0].config)
        self._index(topic)
        try:
            for log in logs:
                if read_partition_metadata(log.directory) != topic_id:
                    write_partition_metadata(log.directory, topic_id)
            self._persist()
        except OSError as exc:
            # Adoption happens on lookups (Metadata, the group coordinator): a full disk must not fail them.
            # The logs are the truth here, so the next adoption tries again.
            _log.error("could not record an adopted topic in the catalog", topic=name, error=str(exc))
        for log in logs:
            self._on_log_opened(log)
        return topic

    def _persist(self) -> None:
        data = {"version": 1, "topics": {
            t.name: {"topic_id": str(t.topic_id), "partitions": t.partitions, "configs": t.configs}
            for t in self._topics.values()}}
        write_json_atomically(self._path, data)

    @staticmethod
    def _info(topic: Topic) -> TopicInfo:
        return TopicInfo(topic.name, topic.topic_id, topic.is_internal, topic.partitions)

    @staticmethod
    def _missing(name: str, error: ErrorCode, message: str | None) -> TopicInfo:
        return TopicInfo(name, ZERO_UUID, is_internal(name), 0, error, message)
