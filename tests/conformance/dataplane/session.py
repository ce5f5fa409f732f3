"""A data-plane session: the group suite's Session plus recorded Produce, Fetch, ListOffsets and topic admin.

What is recorded is what a client observes and relies on: error names, offsets, high watermarks, log start
offsets and the records read back. Topic ids, cluster ids, throttle times, error messages and fetch session
ids are broker choices, so they are recorded only as their aliases or as "was one given".
Record timestamps are chosen by the scenario relative to `base_time_ms` (recent, so no retention or
timestamp-bound config interferes) and recorded relative to it, so transcripts do not depend on the clock.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

from groupcoord.protocol.record_batch import iter_batches

from tests.conformance.dataplane import requests as dq
from tests.conformance.session import POLL_INTERVAL_S, SETTLE_TIMEOUT_S, ScenarioError, Session
from tests.conformance.transcript import UNRECOGNISED, error_name

BASE_TIME_LAG_MS = 60_000


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class DataSession(Session):
    base_time_ms: int = field(default_factory=lambda: _now_ms() - BASE_TIME_LAG_MS)
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    _id_labels: dict[uuid.UUID, str] = field(default_factory=dict)

    def at(self, delta_ms: int) -> int:
        """An explicit CreateTime, `delta_ms` after the session's base time."""
        return self.base_time_ms + delta_ms

    def relative(self, timestamp: int) -> int:
        """A broker-returned record timestamp as the scenario's delta; -1 (none) stays -1."""
        return timestamp if timestamp < 0 else timestamp - self.base_time_ms

    def topic_label(self, topic_id: uuid.UUID | None) -> str:
        return self._id_labels.get(topic_id, UNRECOGNISED)

    async def topic(self, label: str, partitions: int) -> str:
        """Creates a topic (recorded) and learns its id once every client would see it (not recorded)."""
        topic = await self.create_topic(label, partitions)
        await self.wait_for_leaders(topic, partitions)
        await self._learn_topic_id(topic, label)
        return topic

    async def wait_for_leaders(self, topic: str, partitions: int) -> None:
        """Waits, unrecorded, until the broker leads every partition, not just lists it.

        Kafka's metadata cache names the leader before its replica manager has made the partition local,
        and a Produce in between gets NOT_LEADER_OR_FOLLOWER (seen on this machine). ListOffsets goes
        through the replica manager, so its answering NONE for every partition means the topic is usable."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        latest = {p: dq.LATEST_TIMESTAMP for p in range(partitions)}
        while True:
            answered = (await self.admin(dq.list_offsets(topic, latest))).topics[0].partitions
            if all(p.error_code == ErrorCode.none for p in answered):
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"the broker never led all {partitions} partitions of {topic}")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def _learn_topic_id(self, topic: str, label: str) -> None:
        described = (await self.admin(dq.metadata(topic))).topics[0]
        self.topic_ids[topic] = described.topic_id
        self._id_labels[described.topic_id] = label

    async def wait_for_partitions(self, topic: str, count: int) -> None:
        """CreatePartitions, like CreateTopics, answers before the metadata cache has the new partitions."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            described = (await self.admin(dq.metadata(topic))).topics[0]
            if sum(1 for p in described.partitions if p.leader_id >= 0) == count:
                await self.wait_for_leaders(topic, count)
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"topic {topic} never had leaders for its {count} partitions")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def wait_until_gone(self, topic: str) -> None:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while (await self.admin(dq.metadata(topic))).topics[0].error_code == ErrorCode.none:
            if time.monotonic() > deadline:
                raise ScenarioError(f"topic {topic} was still in the metadata after its deletion")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def produce(self, step: str, partitions: dict[tuple[str, int], bytes], *, acks: int = 1) -> Any:
        response = await self.admin(dq.produce(acks, partitions))
        t = self.transcript
        self.transcript.record(step, partitions=sorted(
            [t.alias(topic.name), int(p.index), error_name(p.error_code), int(p.base_offset),
             int(p.log_start_offset), sorted(int(e.batch_index) for e in p.record_errors)]
            for topic in response.responses for p in topic.partition_responses))
        return response

    async def fetch(self, step: str, partitions: dict[tuple[str, int], int], *,
                    forgotten: dict[str, tuple[int, ...]] | None = None, **options: Any) -> Any:
        """Fetches by topic id (v13+); a topic name the session never created stands for an unknown id."""
        request = dq.fetch({(self._topic_id(topic), p): offset for (topic, p), offset in partitions.items()},
                           forgotten={self._topic_id(t): ps for t, ps in (forgotten or {}).items()}, **options)
        return self.record_fetch(step, await self.admin(request))

    def _topic_id(self, topic: str) -> uuid.UUID:
        return self.topic_ids.get(topic) or uuid.uuid5(uuid.NAMESPACE_URL, topic)

    async def fetch_in_session(self, step: str, partitions: dict[tuple[str, int], int], session_id: int,
                               epoch: int, **options: Any) -> Any:
        return await self.fetch(step, partitions, session_id=session_id, session_epoch=epoch, **options)

    def record_fetch(self, step: str, response: Any) -> Any:
        self.transcript.record(
            step, error=error_name(response.error_code), session_given=int(response.session_id) != 0,
            partitions=sorted(self._fetched(topic.topic_id, p) for topic in response.responses
                              for p in topic.partitions))
        return response

    def _fetched(self, topic_id: uuid.UUID | None, p: Any) -> list:
        records = [[offset, key, value, self.relative(ts)] for offset, key, value, ts in dq.read_records(p.records)]
        return [self.topic_label(topic_id), int(p.partition_index), error_name(p.error_code), int(p.high_watermark),
                int(p.last_stable_offset), int(p.log_start_offset), records]

    async def list_offsets(self, step: str, topic: str, timestamps: dict[int, int]) -> None:
        """Records offset and timestamp (relative); the spec's -1 sentinels stay as they are. Leader epochs
        are recorded by `leader_epochs`, so that their known difference does not hide these answers."""
        response = await self.admin(dq.list_offsets(topic, timestamps))
        t = self.transcript
        t.record(step, partitions=sorted(
            [t.alias(topic.name), int(p.partition_index), error_name(p.error_code), int(p.offset),
             self.relative(int(p.timestamp))]
            for topic in response.topics for p in topic.partitions))

    async def leader_epochs(self, step: str, topic: str, timestamps: dict[int, int]) -> None:
        """The leader epochs a client learns for a partition: from Metadata, ListOffsets and fetched batches."""
        described = (await self.admin(dq.metadata(topic))).topics[0]
        listed = (await self.admin(dq.list_offsets(topic, timestamps))).topics[0].partitions
        fetched = (await self.admin(dq.fetch({(self.topic_ids[topic], p): 0 for p in timestamps}))).responses
        self.transcript.record(
            step, metadata=sorted([int(p.partition_index), int(p.leader_epoch)] for p in described.partitions),
            list_offsets=sorted([int(p.partition_index), int(p.offset), int(p.leader_epoch)] for p in listed),
            batches=sorted([int(p.partition_index), header.base_offset, header.partition_leader_epoch]
                           for t in fetched for p in t.partitions for _, header in iter_batches(p.records or b"")))

    async def create_topics(self, step: str, label: str, partitions: int, **options: Any) -> str:
        topic = self.name("topic", label)
        result = (await self.admin(dq.create_topics(topic, partitions, **options))).topics[0]
        self.transcript.record(step, error=error_name(result.error_code), partitions=int(result.num_partitions),
                               replication_factor=int(result.replication_factor),
                               id_given=result.topic_id not in (None, uuid.UUID(int=0)))
        return topic

    async def describe_topic(self, step: str, topic: str) -> None:
        described = (await self.admin(dq.metadata(topic))).topics[0]
        self.transcript.record(step, error=error_name(described.error_code),
                               partitions=sorted(int(p.partition_index) for p in described.partitions))

    async def create_partitions(self, step: str, topic: str, count: int) -> None:
        result = (await self.admin(dq.create_partitions(topic, count))).results[0]
        self.transcript.record(step, error=error_name(result.error_code))

    async def delete_topics(self, step: str, *topics: str) -> None:
        response = await self.admin(dq.delete_topics(*topics))
        t = self.transcript
        t.record(step, results=sorted([t.alias(r.name), error_name(r.error_code)] for r in response.responses))

    async def init_producer_id(self, step: str) -> dq.Producer:
        """Retries, unrecorded, while the transaction coordinator loads, as the Java producer does: Kafka
        creates __transaction_state on the first InitProducerId and answers COORDINATOR_LOAD_IN_PROGRESS
        until it has."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        response = await self.admin(dq.init_producer_id())
        while response.error_code != ErrorCode.none and response.error_code.retriable:
            if time.monotonic() > deadline:
                raise ScenarioError(f"InitProducerId still answered {error_name(response.error_code)}")
            await asyncio.sleep(POLL_INTERVAL_S)
            response = await self.admin(dq.init_producer_id())
        self.transcript.record(step, error=error_name(response.error_code),
                               producer_id_given=int(response.producer_id) >= 0,
                               epoch=int(response.producer_epoch))
        return dq.Producer(int(response.producer_id), int(response.producer_epoch))
