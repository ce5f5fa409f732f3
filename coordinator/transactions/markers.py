"""Where a transaction's markers go (Kafka's TransactionMarkerChannelManager and KafkaApis' WriteTxnMarkers
routing, in one place): ``__consumer_offsets`` partitions to the group coordinator, which appends the
marker and settles the pending transactional offsets; every other partition to the data plane.

``write`` answers an error per partition once every marker it wrote is durable. The coordinator retries
a partition whose write failed until it succeeds, as Kafka's marker channel does; a partition whose
topic is gone is given up (Kafka drops markers for partitions that no longer exist).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.names import OFFSETS_TOPIC

TopicPartition = tuple[str, int]
# (producer id, producer epoch, coordinator epoch, committed, partitions) -> error per partition
DataMarkerWriter = Callable[[int, int, int, bool, list[TopicPartition]], Awaitable[dict[TopicPartition, ErrorCode]]]

# Errors after which a marker is not retried: the partition is gone (Kafka removes it from the pending set).
GIVE_UP = frozenset({ErrorCode.unknown_topic_or_partition, ErrorCode.unknown_topic_id})


@frozen_dataclass
class Marker:
    """A transaction's end to write: commit or abort markers for its partitions, fenced by the coordinator epoch."""
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    partitions: tuple[TopicPartition, ...]


class MarkerRouter:
    def __init__(self, groups: Any, data_writer: DataMarkerWriter | None) -> None:
        self.groups = groups
        self.data_writer = data_writer

    async def write(self, marker: Marker) -> dict[TopicPartition, ErrorCode]:
        offsets = [tp for tp in marker.partitions if tp[0] == OFFSETS_TOPIC]
        data = [tp for tp in marker.partitions if tp[0] != OFFSETS_TOPIC]
        results: dict[TopicPartition, ErrorCode] = {}
        waits = [self.groups.complete_transaction(p, marker.producer_id, marker.producer_epoch,
                                                  marker.coordinator_epoch, marker.committed) for _, p in offsets]
        if data:
            if self.data_writer is None:
                results.update({tp: ErrorCode.coordinator_not_available for tp in data})
            else:
                results.update(await self.data_writer(marker.producer_id, marker.producer_epoch,
                                                       marker.coordinator_epoch, marker.committed, data))
        for tp, answer in zip(offsets, await asyncio.gather(*waits)):
            results[tp] = ErrorCode(answer["error_code"])
        return results
