"""The share coordinator as the broker calls it (Kafka's ShareCoordinatorService): the persisted state of
every share partition, in the compacted ``__share_group_state`` topic.

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
from typing import Any, Callable

from groupcoord.coordinator.clock import Clock, SystemClock
from groupcoord.coordinator.dataplane.topic_ids import to_kafka_string
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.runtime.coordinator_runtime import CoordinatorRuntime
from groupcoord.coordinator.share import records
from groupcoord.coordinator.share.shard import SharePartitionKey, ShareStateShard, WriteData
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import SHARE_GROUP_STATE_TOPIC
from groupcoord.storage.config import CleanupPolicy, LogConfig


def coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka's SharePartitionKey.asCoordinatorKey: ``group:topicId:partition``."""
    return f"{group_id}:{to_kafka_string(topic_id)}:{partition}"


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
        shards = [ShareStateShard(p, config, partition_exists=partition_exists) for p in range(self.num_partitions)]
        self._runtime = CoordinatorRuntime(shards, config, log_manager, self.log_config, self.clock, _Observer(),
                                           topic=SHARE_GROUP_STATE_TOPIC, codec=records, name="share")
        self._log_manager = log_manager
        self._active = False
        self._activating: asyncio.Task | None = None

    @property
    def log_config(self) -> LogConfig:
        """As Kafka creates __share_group_state: compacted, its own segment size."""
        return LogConfig.from_topic_configs(
            {"cleanup.policy": CleanupPolicy.COMPACT.value,
             "segment.bytes": str(getattr(self.config, "share_coordinator_state_topic_segment_bytes", 104857600))},
            base=self.topic_defaults)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if any(topic == SHARE_GROUP_STATE_TOPIC for topic, _ in list(self._log_manager.logs)):
            await self._activate()

    def ensure_active(self) -> bool:
        if self._active:
            return True
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

    async def initialize(self, sp: SharePartitionKey, state_epoch: int, start_offset: int) -> ErrorCode:
        await self.wait_active()
        answer = await self._runtime.run(self.partition_for(*sp),
                                         lambda s, t, now: s.initialize(sp, state_epoch, start_offset, t, now),
                                         lambda e: {"error_code": e})
        return ErrorCode(answer["error_code"])

    async def write(self, sp: SharePartitionKey, data: WriteData) -> ErrorCode:
        await self.wait_active()
        answer = await self._runtime.run(self.partition_for(*sp), lambda s, t, now: s.write(sp, data, t, now),
                                         lambda e: {"error_code": e})
        return ErrorCode(answer["error_code"])

    async def read(self, sp: SharePartitionKey, leader_epoch: int = 0) -> dict:
        await self.wait_active()
        return self.shard_for(sp).read(sp, leader_epoch)

    async def read_summary(self, sp: SharePartitionKey) -> dict:
        await self.wait_active()
        return self.shard_for(sp).read_summary(sp)

    async def delete(self, sp: SharePartitionKey) -> ErrorCode:
        await self.wait_active()
        answer = await self._runtime.run(self.partition_for(*sp), lambda s, t, now: s.delete(sp, t, now),
                                         lambda e: {"error_code": e})
        return ErrorCode(answer["error_code"])

    def known(self, group_id: str | None = None) -> list[SharePartitionKey]:
        """The share partitions with persisted state (of one group, or all)."""
        return [sp for shard in self.shards() for sp in list(shard.states)
                if group_id is None or sp[0] == group_id]
