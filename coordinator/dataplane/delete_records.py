"""DeleteRecords: move a partition's log start offset forward (``kafka-delete-records``, the admin client's
``deleteRecords``), as Kafka's Partition.deleteRecordsOnLeader does.

The new start is durable before the answer (the log start offset checkpoint), so deleted records do not
come back after a restart; whole segments below it are removed at once.
"""
from __future__ import annotations

from typing import Any

from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.names import is_internal
from groupcoord.coordinator.dataplane.topics import TopicCatalog
from groupcoord.protocol.frozen import frozen_dataclass

HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK: delete everything below the high watermark
NO_LOW_WATERMARK = -1


@frozen_dataclass
class DeleteRecordsResult:
    low_watermark: int
    error: ErrorCode = ErrorCode.none
    message: str | None = None


class DeleteRecordsService:
    def __init__(self, catalog: TopicCatalog, log_manager: Any) -> None:
        self._catalog = catalog
        self._log_manager = log_manager

    async def delete(self, topic: str, partition: int, offset: int) -> DeleteRecordsResult:
        if is_internal(topic):
            return DeleteRecordsResult(NO_LOW_WATERMARK, ErrorCode.invalid_topic_exception,
                                       f"Cannot delete records of internal topic {topic}")
        log = self._catalog.log(topic, partition)
        if log is None:
            return DeleteRecordsResult(NO_LOW_WATERMARK, self._catalog.missing_partition_error(topic, partition))
        if not log.config.delete:
            return DeleteRecordsResult(NO_LOW_WATERMARK, ErrorCode.policy_violation,
                                       f"Records of partition {topic}-{partition} can not be deleted due to the "
                                       "configured policy")
        target = log.high_watermark if offset == HIGH_WATERMARK else offset
        if target < 0:
            return DeleteRecordsResult(NO_LOW_WATERMARK, ErrorCode.offset_out_of_range,
                                       f"The offset {target} for partition {topic}-{partition} is not valid")
        if target > log.high_watermark:
            return DeleteRecordsResult(NO_LOW_WATERMARK, ErrorCode.offset_out_of_range,
                                       f"Cannot increment the log start offset to {target} of partition "
                                       f"{topic}-{partition} since it is larger than the high watermark "
                                       f"{log.high_watermark}")
        start = await self._log_manager.delete_records(topic, partition, target)
        return DeleteRecordsResult(start)
