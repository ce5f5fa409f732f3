"""ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups.

At isolation level read_committed (1) the latest offset is the last stable offset, as Kafka's
fetchOffsetForTimestamp answers; read_uncommitted's is the high watermark. Leader epochs are Kafka's: the log's (0, a single node has always led) for earliest
and latest, the found batch's for a timestamp lookup, -1 when nothing is found. Clients validate positions
with OffsetForLeaderEpoch only where the broker serves it, and this one does not, so knowing the epoch changes
nothing for them beyond matching Kafka's answers.
"""
from __future__ import annotations

import enum
from typing import Any

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import decode_records

from groupcoord.coordinator.dataplane.producer_states import ProducerStates
from groupcoord.coordinator.dataplane.topics import TopicCatalog

READ_COMMITTED = 1


class SpecialTimestamp(enum.IntEnum):
    LATEST = -1
    EARLIEST = -2
    MAX_TIMESTAMP = -3          # v7+
    EARLIEST_LOCAL = -4         # v8+ (tiered storage; without it, the same as EARLIEST)
    LATEST_TIERED = -5          # v9+ (tiered storage; without it, nothing is tiered)


NO_OFFSET = -1
NO_TIMESTAMP = -1
NO_EPOCH = -1


def _found(partition: int, offset: int, timestamp: int, epoch: int = NO_EPOCH) -> dict:
    return {"partition_index": partition, "error_code": ErrorCode.none, "timestamp": timestamp,
            "offset": offset, "leader_epoch": epoch if offset != NO_OFFSET else NO_EPOCH}


class ListOffsetsService:
    def __init__(self, catalog: TopicCatalog, producer_states: ProducerStates | None = None) -> None:
        self._catalog = catalog
        self._states = producer_states

    async def list_offsets(self, topics: list[tuple[str, list[tuple[int, int]]]], isolation_level: int = 0) -> dict:
        """``topics``: (name, [(partition, timestamp)]) -> the version-neutral ListOffsetsResponse body."""
        out = []
        for name, partitions in topics:
            seen: set[int] = set()
            results = []
            for partition, timestamp in partitions:
                if partition in seen:
                    results.append(self._error(partition, ErrorCode.invalid_request))
                    continue
                seen.add(partition)
                results.append(await self.lookup(name, partition, timestamp, isolation_level))
            out.append({"name": name, "partitions": results})
        return {"throttle_time": 0, "topics": out}

    async def lookup(self, topic: str, partition: int, timestamp: int, isolation_level: int = 0) -> dict:
        log = self._catalog.log(topic, partition)
        if log is None:
            return self._error(partition, self._catalog.missing_partition_error(topic, partition))
        if timestamp in (SpecialTimestamp.EARLIEST, SpecialTimestamp.EARLIEST_LOCAL):
            return _found(partition, log.log_start_offset, NO_TIMESTAMP, log.leader_epoch)
        fetchable = log.high_watermark
        if isolation_level == READ_COMMITTED and self._states is not None:
            fetchable = await self._states.last_stable_offset(log)
        if timestamp == SpecialTimestamp.LATEST:
            return _found(partition, fetchable, NO_TIMESTAMP, log.leader_epoch)
        if timestamp == SpecialTimestamp.LATEST_TIERED:
            return _found(partition, NO_OFFSET, NO_TIMESTAMP)
        if timestamp == SpecialTimestamp.MAX_TIMESTAMP:
            found = await self._max_timestamp(log, partition)
            return found if found["offset"] < fetchable else _found(partition, NO_OFFSET, NO_TIMESTAMP)
        if timestamp < 0:
            return self._error(partition, ErrorCode.invalid_request)
        hit = await log.offset_for_timestamp(timestamp)
        if hit is None or hit[0] >= fetchable:    # Kafka's filter: only offsets the isolation level can read
            return _found(partition, NO_OFFSET, NO_TIMESTAMP)
        offset, found_ts, epoch = hit
        return _found(partition, offset, found_ts, epoch)

    async def _max_timestamp(self, log: Any, partition: int) -> dict:
        """The first record carrying the largest timestamp (Kafka's offsetOfMaxTimestamp) among the records still
        in the log. Kafka 4.3 answers from its segments' max-timestamp-so-far, which DeleteRecords does not
        lower, so it can name an offset below the log start offset — a record no consumer can fetch any more.
        Only records from the log start offset on count here (a batch straddling it is read record by record)."""
        start = log.log_start_offset
        best_ts, best_data = NO_TIMESTAMP, None
        async for header, data in log.batches(start):
            if header.is_control:
                continue
            batch_ts = header.max_timestamp
            if header.base_offset < start and header.timestamp_type != 1:
                batch_ts = max((r.timestamp for r in decode_records(data, 0, header) if r.offset >= start),
                               default=NO_TIMESTAMP)
            if batch_ts > best_ts:
                best_ts, best_data = batch_ts, (header, data)
        if best_data is None:
            return _found(partition, NO_OFFSET, NO_TIMESTAMP)
        header, data = best_data
        epoch = header.partition_leader_epoch
        if header.timestamp_type == 1:           # LogAppendTime: every record carries the batch's time
            return _found(partition, max(header.base_offset, start), best_ts, epoch)
        for record in decode_records(data, 0, header):
            if record.offset >= start and record.timestamp == best_ts:
                return _found(partition, record.offset, best_ts, epoch)
        return _found(partition, header.last_offset, best_ts, epoch)

    @staticmethod
    def _error(partition: int, error: ErrorCode) -> dict:
        return {"partition_index": partition, "error_code": error, "timestamp": NO_TIMESTAMP,
                "offset": NO_OFFSET, "leader_epoch": NO_EPOCH}
