"""The persister (Kafka's DefaultStatePersister): what share partitions and the group side call to read and
write share-group state. In Kafka it sends the *ShareGroupState RPCs to the share coordinator of each key;
here the share coordinator is in the same process, so it calls it directly, one share partition at a time,
with the same answers the RPCs give."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

from groupcoord.coordinator.share.coordinator_service import ShareCoordinator
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.share.persister_answers import ReadState, StateSummary
    from groupcoord.coordinator.share.shard import WriteData

TopicIdPartition = tuple[uuid.UUID, int]


def __getattr__(name: str) -> object:
    """``ReadState`` and ``StateSummary``, from persister_answers.py (made by the first read: see its docstring)."""
    if name in ("ReadState", "StateSummary"):
        from groupcoord.coordinator.share import persister_answers

        return getattr(persister_answers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SharePersister:
    def __init__(self, coordinator: ShareCoordinator) -> None:
        self.coordinator = coordinator

    async def initialize(self, group_id: str, partitions: list[TopicIdPartition], start_offset: int = -1,
                         state_epoch: int = 0) -> dict[TopicIdPartition, ErrorCode]:
        results = await asyncio.gather(*(self.coordinator.initialize((group_id, t, p), state_epoch, start_offset)
                                         for t, p in partitions))
        return dict(zip(partitions, results))

    async def read(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int = 0) -> ReadState:
        from groupcoord.coordinator.share.persister_answers import ReadState

        answer = await self.coordinator.read((group_id, topic_id, partition), leader_epoch)
        return ReadState(ErrorCode(answer["error_code"]), answer["state_epoch"], answer["start_offset"],
                         tuple(answer["state_batches"]))

    async def write(self, group_id: str, topic_id: uuid.UUID, partition: int, data: WriteData) -> ErrorCode:
        return await self.coordinator.write((group_id, topic_id, partition), data)

    async def read_summary(self, group_id: str,
                           partitions: list[TopicIdPartition]) -> dict[TopicIdPartition, StateSummary]:
        from groupcoord.coordinator.share.persister_answers import StateSummary

        answers = await asyncio.gather(*(self.coordinator.read_summary((group_id, t, p)) for t, p in partitions))
        return {tp: StateSummary(ErrorCode(a["error_code"]), a["start_offset"], a["state_epoch"], a["leader_epoch"],
                                 a["delivery_complete_count"]) for tp, a in zip(partitions, answers)}

    async def delete(self, group_id: str, partitions: list[TopicIdPartition]) -> dict[TopicIdPartition, ErrorCode]:
        results = await asyncio.gather(*(self.coordinator.delete((group_id, t, p)) for t, p in partitions))
        return dict(zip(partitions, results))

    def known_partitions(self, group_id: str) -> list[TopicIdPartition]:
        return [(t, p) for _g, t, p in self.coordinator.known(group_id)]
