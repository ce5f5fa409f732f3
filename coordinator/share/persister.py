"""The persister (Kafka's DefaultStatePersister): what share partitions and the group side call to read and
write share-group state. In Kafka it sends the *ShareGroupState RPCs to the share coordinator of each key;
here the share coordinator is in the same process, so it calls it directly, one share partition at a time,
with the same answers the RPCs give."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from groupcoord.coordinator.share.coordinator_service import ShareCoordinator
from groupcoord.coordinator.share.records import StateBatch
from groupcoord.coordinator.share.shard import WriteData
from groupcoord.protocol.errors import ErrorCode

TopicIdPartition = tuple[uuid.UUID, int]


@dataclass(frozen=True, slots=True)
class StateSummary:
    """ReadShareGroupStateSummary's answer for one share partition."""
    error: ErrorCode
    start_offset: int
    state_epoch: int
    leader_epoch: int
    delivery_complete_count: int = -1


@dataclass(frozen=True, slots=True)
class ReadState:
    """ReadShareGroupState's answer for one share partition: epochs, start offset and state batches."""
    error: ErrorCode
    state_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...]


class SharePersister:
    def __init__(self, coordinator: ShareCoordinator) -> None:
        self.coordinator = coordinator

    async def initialize(self, group_id: str, partitions: list[TopicIdPartition], start_offset: int = -1,
                         state_epoch: int = 0) -> dict[TopicIdPartition, ErrorCode]:
        results = await asyncio.gather(*(self.coordinator.initialize((group_id, t, p), state_epoch, start_offset)
                                         for t, p in partitions))
        return dict(zip(partitions, results))

    async def read(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int = 0) -> ReadState:
        answer = await self.coordinator.read((group_id, topic_id, partition), leader_epoch)
        return ReadState(ErrorCode(answer["error_code"]), answer["state_epoch"], answer["start_offset"],
                         tuple(answer["state_batches"]))

    async def write(self, group_id: str, topic_id: uuid.UUID, partition: int, data: WriteData) -> ErrorCode:
        return await self.coordinator.write((group_id, topic_id, partition), data)

    async def read_summary(self, group_id: str,
                           partitions: list[TopicIdPartition]) -> dict[TopicIdPartition, StateSummary]:
        answers = await asyncio.gather(*(self.coordinator.read_summary((group_id, t, p)) for t, p in partitions))
        return {tp: StateSummary(ErrorCode(a["error_code"]), a["start_offset"], a["state_epoch"], a["leader_epoch"],
                                 a["delivery_complete_count"]) for tp, a in zip(partitions, answers)}

    async def delete(self, group_id: str, partitions: list[TopicIdPartition]) -> dict[TopicIdPartition, ErrorCode]:
        results = await asyncio.gather(*(self.coordinator.delete((group_id, t, p)) for t, p in partitions))
        return dict(zip(partitions, results))

    def known_partitions(self, group_id: str) -> list[TopicIdPartition]:
        return [(t, p) for _g, t, p in self.coordinator.known(group_id)]
