"""Fetch: raw batches from the logs, with Kafka's size limits and long polling.

Limits follow KIP-74: partitions are read in request order, each up to its partition_max_bytes and the
response's remaining max_bytes, and the first batch found is returned whole even when it is larger, so
a consumer can always make progress. Incremental fetch sessions (KIP-227) are declined by answering
session id 0, which every client treats as "send full requests"; a request naming a session we never
created gets FETCH_SESSION_ID_NOT_FOUND, as Kafka answers for an evicted session.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from protocol.errors import ErrorCode

from coordinator.dataplane.traffic import NO_TRAFFIC_OBSERVER, TrafficObserver
from coordinator.dataplane.clock import Clock
from coordinator.dataplane.fetch_purgatory import FetchPurgatory, WakeReason
from coordinator.dataplane.topics import TopicCatalog

READ_COMMITTED = 1


@dataclass(frozen=True, slots=True)
class FetchPartition:
    partition: int
    fetch_offset: int
    partition_max_bytes: int


@dataclass(frozen=True, slots=True)
class FetchTopic:
    name: str | None                  # versions <= 12
    topic_id: uuid.UUID | None        # versions >= 13
    partitions: tuple[FetchPartition, ...]


@dataclass(frozen=True, slots=True)
class FetchRequestData:
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int
    topics: tuple[FetchTopic, ...]


class FetchService:
    def __init__(self, catalog: TopicCatalog, purgatory: FetchPurgatory, clock: Clock,
                 observer: TrafficObserver = NO_TRAFFIC_OBSERVER) -> None:
        self._catalog = catalog
        self._purgatory = purgatory
        self._clock = clock
        self._observer = observer

    async def fetch(self, request: FetchRequestData) -> dict:
        """The version-neutral FetchResponse body, after waiting (at most max_wait_ms) for min_bytes."""
        if request.session_id != 0:
            return {"throttle_time": 0, "error_code": ErrorCode.fetch_session_id_not_found,
                    "session_id": 0, "responses": []}
        deadline = self._clock.now_ms() + max(0, request.max_wait_ms)
        while True:
            ends_before = self._end_offsets(request)
            responses, total_bytes, has_error = await self._read(request)
            if (total_bytes >= request.min_bytes or has_error or request.max_wait_ms <= 0
                    or self._clock.now_ms() >= deadline):
                break
            if self._end_offsets(request) != ends_before:
                continue          # an append landed while we were reading: look again before parking
            reason = await self._purgatory.park(self._keys(request), deadline)
            if reason is WakeReason.SHUTDOWN:
                responses, _, _ = await self._read(request)
                break
        for topic in responses:
            sent = sum(len(p["records"]) for p in topic["partitions"])
            if sent:
                self._observer.on_bytes_out(topic["topic"], sent)
        return {"throttle_time": 0, "error_code": ErrorCode.none, "session_id": 0, "responses": responses}

    def _resolve(self, topic: FetchTopic) -> tuple[str | None, uuid.UUID | None, ErrorCode]:
        if topic.topic_id is not None and topic.name is None:
            known = self._catalog.by_id(topic.topic_id)
            if known is None:
                return None, topic.topic_id, ErrorCode.unknown_topic_id
            return known.name, known.topic_id, ErrorCode.none
        known = self._catalog.get(topic.name)
        if known is None:
            return topic.name, None, ErrorCode.unknown_topic_or_partition
        return known.name, known.topic_id, ErrorCode.none

    def _keys(self, request: FetchRequestData) -> list[tuple[str, int]]:
        keys = []
        for topic in request.topics:
            name, _, error = self._resolve(topic)
            if error is ErrorCode.none:
                keys.extend((name, p.partition) for p in topic.partitions)
        return keys

    def _end_offsets(self, request: FetchRequestData) -> tuple[int, ...]:
        ends = []
        for name, partition in self._keys(request):
            log = self._catalog.log(name, partition)
            ends.append(-1 if log is None else log.high_watermark)
        return tuple(ends)

    async def _read(self, request: FetchRequestData) -> tuple[list[dict], int, bool]:
        remaining = request.max_bytes
        total = 0
        has_error = False
        min_one = True
        aborted = [] if request.isolation_level == READ_COMMITTED else None
        responses = []
        for topic in request.topics:
            name, topic_id, topic_error = self._resolve(topic)
            partitions = []
            for part in topic.partitions:
                entry = {"partition_index": part.partition, "error_code": ErrorCode.none, "high_watermark": -1,
                         "last_stable_offset": -1, "log_start_offset": -1, "aborted_transactions": aborted,
                         "preferred_read_replica": -1, "records": b""}
                log = None if topic_error is not ErrorCode.none else self._catalog.log(name, part.partition)
                if log is None:
                    entry["error_code"] = (topic_error if topic_error is not ErrorCode.none
                                           else ErrorCode.unknown_topic_or_partition)
                    has_error = True
                    partitions.append(entry)
                    continue
                high_watermark = log.high_watermark
                entry.update(high_watermark=high_watermark, last_stable_offset=high_watermark,
                             log_start_offset=log.log_start_offset)
                if not log.log_start_offset <= part.fetch_offset <= high_watermark:
                    entry["error_code"] = ErrorCode.offset_out_of_range
                    has_error = True
                elif part.fetch_offset < high_watermark and (remaining > 0 or min_one):
                    limit = max(0, min(part.partition_max_bytes, remaining))
                    data = await log.read(part.fetch_offset, limit, min_one=min_one)
                    if data:
                        entry["records"] = data
                        total += len(data)
                        remaining -= len(data)
                        min_one = False
                partitions.append(entry)
            responses.append({"topic": name if name is not None else "", "topic_id": topic_id or uuid.UUID(int=0),
                              "partitions": partitions})
        return responses, total, has_error


def parse_request(request: Any, api_version: int) -> FetchRequestData:
    """Lift a kio FetchRequest of any version (v4+) into FetchRequestData."""
    by_id = api_version >= 13
    topics = []
    for topic in request.topics:
        topics.append(FetchTopic(
            name=None if by_id else topic.topic,
            topic_id=topic.topic_id if by_id else None,
            partitions=tuple(FetchPartition(p.partition, int(p.fetch_offset), int(p.partition_max_bytes))
                             for p in topic.partitions)))
    return FetchRequestData(
        max_wait_ms=_ms(request.max_wait),
        min_bytes=int(request.min_bytes),
        max_bytes=int(getattr(request, "max_bytes", 0x7FFFFFFF)),
        isolation_level=int(getattr(request, "isolation_level", 0)),
        session_id=int(getattr(request, "session_id", 0)),
        topics=tuple(topics))


def _ms(value: Any) -> int:
    seconds = getattr(value, "total_seconds", None)
    return int(seconds() * 1000) if seconds is not None else int(value)

