"""The share coordinator as the broker calls it (Kafka's ShareCoordinatorService): the persisted state of
every share partition, in the ``__share_group_state`` topic (cleanup.policy=delete, no retention, as Kafka's).

A share partition ``group:topicId:partition`` (Kafka's SharePartitionKey, the topic id in Kafka's base64
spelling — the key FindCoordinator's SHARE key type carries) is owned by the partition its Java hash picks
among ``share.coordinator.state.topic.num.partitions``. Each partition is a ``ShareStateShard`` run by the
same coordinator runtime as the group and transaction coordinators, which appends its records, answers once
they are durable and replays them on start-up. Like Kafka, the topic is created when share state is first
written or asked for.
"""

from __future__ import annotations

import asyncio
import uuid
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

from groupcoord.coordinator.clock import Clock, SystemClock
from groupcoord.coordinator.dataplane.topic_ids import to_kafka_string
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.runtime.coordinator_runtime import CoordinatorRuntime
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import SHARE_GROUP_STATE_TOPIC
from groupcoord.storage.config import CleanupPolicy, LogConfig

if TYPE_CHECKING:
    from groupcoord.coordinator.share.shard import SharePartitionKey, ShareStateShard, WriteData


def coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka's SharePartitionKey.asCoordinatorKey: ``group:topicId:partition``."""
    return f"{group_id}:{to_kafka_string(topic_id)}:{partition}"


class ShareCoordinatorStopped(Exception):
    """The broker is stopping: share state can no longer be read or written."""


class _Observer:
    def on_shard_loaded(self, partition: int, seconds: float, records: int) -> None:
        pass


class ShareCoordinator:
    def __init__(self, config: Any, log_manager: Any, *, clock: Clock | None = None,
                 partition_exists: Callable[[uuid.UUID, int], bool] = lambda _t, _p: True,
                 topic_defaults: LogConfig | None = None) -> None:
        self.config = config
        self.clock = clock or SystemClock()
        self.topic_defaults = topic_defaults or LogConfig()
        configured = getattr(config, "share_coordinator_state_topic_num_partitions", 50)
        existing = {p for t, p in list(getattr(log_manager, "logs", {})) if t == SHARE_GROUP_STATE_TOPIC}
        self.num_partitions = max(configured, max(existing) + 1) if existing else configured
        self._partition_exists = partition_exists
        self._log_manager = log_manager
        self._active = False
        self._activating: asyncio.Task | None = None
        self._stopped = False

    @cached_property
    def _runtime(self) -> CoordinatorRuntime:
        """The shards and their runtime, made (and the share state's shard and record modules imported: ~2 % of
        the daemon's start-up) when first asked for: by the first share request's activation, by ``start``
        when the topic has partitions on disk (after the broker listens), or by a read of the shards."""
        from groupcoord.coordinator.share import records
        from groupcoord.coordinator.share.shard import ShareStateShard

        config = self.config
        shards = [ShareStateShard(p, config, partition_exists=self._partition_exists)
                  for p in range(self.num_partitions)]
        # No runtime snapshot of "the latest record per key": every ShareUpdate since a share partition's last
        # ShareSnapshot counts, though they share one key (why Kafka's topic is not compacted).
        return CoordinatorRuntime(shards, config, self._log_manager, self.log_config, self.clock, _Observer(),
                                  topic=SHARE_GROUP_STATE_TOPIC, codec=records, name="share", snapshots=False)

    @property
    def log_config(self) -> LogConfig:
        """As Kafka creates __share_group_state (ShareCoordinatorService.shareGroupStateTopicConfigs, KIP-932):
        cleanup.policy=delete with no time retention — not compacted, since a share partition's ShareUpdate
        records all share one key and each carries only what changed since the ShareSnapshot before it."""
        return LogConfig.from_topic_configs(
            {"cleanup.policy": CleanupPolicy.DELETE.value, "retention.ms": "-1", "retention.bytes": "-1",
             "segment.bytes": str(getattr(self.config, "share_coordinator_state_topic_segment_bytes", 104857600))},
            base=self.topic_defaults)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if any(topic == SHARE_GROUP_STATE_TOPIC for topic, _ in list(self._log_manager.logs)):
            await self._activate()

    def ensure_active(self) -> bool:
        if self._active:
            return True
        if self._stopped:
            raise ShareCoordinatorStopped()
        if self._activating is None:
            self._activating = asyncio.get_running_loop().create_task(self._activate(), name="share-state-start")
        return False

    async def wait_active(self) -> None:
        if not self.ensure_active():
            await asyncio.shield(self._activating)

    async def _activate(self) -> None:
        await self._runtime.start()
        self._active = True

    async def stop(self) -> None:
        self._stopped = True  # what arrives from now on (a release after a connection closed) is refused
        if self._activating is not None:
            await asyncio.gather(self._activating, return_exceptions=True)
            self._activating = None
        was_active, self._active = self._active, False
        if was_active:
            await self._runtime.stop()

    # ------------------------------------------------------------------ routing

    def partition_for(self, group_id: str, topic_id: uuid.UUID, partition: int) -> int:
        return partition_for(coordinator_key(group_id, topic_id, partition), self.num_partitions)

    def shard_for(self, sp: SharePartitionKey) -> ShareStateShard:
        return self._runtime.shard(self.partition_for(*sp))  # type: ignore[return-value]

    def shards(self) -> list[ShareStateShard]:
        return self._runtime.shards()  # type: ignore[return-value]

    # ------------------------------------------------------------------ operations (one share partition each)

    async def _ready(self) -> ErrorCode | None:
        try:
            await self.wait_active()
        except ShareCoordinatorStopped:
            return ErrorCode.coordinator_not_available
        return None

    async def initialize(self, sp: SharePartitionKey, state_epoch: int, start_offset: int) -> ErrorCode:
        if (error := await self._ready()) is not None:
            return error
        answer = await self._runtime.run(self.partition_for(*sp),
                                         lambda s, t, now: s.initialize(sp, state_epoch, start_offset, t, now),
                                         lambda e: {"error_code": e})
        return ErrorCode(answer["error_code"])

    async def write(self, sp: SharePartitionKey, data: WriteData) -> ErrorCode:
        if (error := await self._ready()) is not None:
            return error
        answer = await self._runtime.run(self.partition_for(*sp), lambda s, t, now: s.write(sp, data, t, now),
                                         lambda e: {"error_code": e})
        return ErrorCode(answer["error_code"])

    async def read(self, sp: SharePartitionKey, leader_epoch: int = 0) -> dict:
        if (error := await self._ready()) is not None:
            return {"error_code": error, "state_epoch": 0, "start_offset": -1, "state_batches": ()}
        return self.shard_for(sp).read(sp, leader_epoch)

    async def read_summary(self, sp: SharePartitionKey) -> dict:
        if (error := await self._ready()) is not None:
            return {"error_code": error, "state_epoch": 0, "leader_epoch": -1, "start_offset": -1,
                    "delivery_complete_count": -1}
        return self.shard_for(sp).read_summary(sp)

    async def delete(self, sp: SharePartitionKey) -> ErrorCode:
        if (error := await self._ready()) is not None:
            return error
        answer = await self._runtime.run(self.partition_for(*sp), lambda s, t, now: s.delete(sp, t, now),
                                         lambda e: {"error_code": e})
        return ErrorCode(answer["error_code"])

    def known(self, group_id: str | None = None) -> list[SharePartitionKey]:
        """The share partitions with persisted state (of one group, or all)."""
        return [sp for shard in self.shards() for sp in list(shard.states)
                if group_id is None or sp[0] == group_id]
