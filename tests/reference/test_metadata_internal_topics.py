"""All-topics Metadata lists `__consumer_offsets` as Kafka 4.3.1 does: an internal topic (is_internal=true)
with offsets.topic.num.partitions partitions, beside the user's topics (not internal). Tools rely on it:
`kafka-topics --list` shows it unless --exclude-internal, Spark's Kafka source subscribes to it, and admin
clients filter it out only because the flag says internal.

Kafka creates the topic at the first group-coordinator lookup, so both brokers are asked after a
FindCoordinator and an OffsetCommit; groupcoord lists it from start-up (its offsets log exists from the
start), which no client can tell apart from a cluster that has already served a group.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from tests.conformance.dataplane.requests import DataApi, create_topics, schema
from tests.conformance.requests import find_coordinator, offset_commit
from tests.conformance.wire import Connection

pytestmark = pytest.mark.reference

OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_OFFSETS_PARTITIONS = 50


def _all_topics():
    m = schema(DataApi.METADATA)
    return m.MetadataRequest(topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False)


async def _listing(address: str, topic: str, group: str) -> dict[str, tuple[bool, int]]:
    connection = await Connection.open(address)
    try:
        await connection.send(create_topics(topic, 1))
        for _ in range(100):  # Kafka answers COORDINATOR_NOT_AVAILABLE while it creates the offsets topic
            found = await connection.send(find_coordinator(group))
            if found.coordinators[0].error_code == 0:
                break
            await asyncio.sleep(0.2)
        for _ in range(100):
            committed = await connection.send(offset_commit(group, -1, "", {(topic, 0): 3}))
            if committed.topics[0].partitions[0].error_code == 0:
                break
            await asyncio.sleep(0.2)
        answer = await connection.send(_all_topics())
        return {t.name: (t.is_internal, len(t.partitions)) for t in answer.topics}
    finally:
        await connection.close()


async def test_all_topics_metadata_lists_the_offsets_topic_as_internal_on_both_brokers(kafka_reference,
                                                                                       groupcoord_bootstrap):
    topic, group = f"meta-{uuid.uuid4().hex[:8]}", f"meta-group-{uuid.uuid4().hex[:8]}"
    kafka = await _listing(kafka_reference, topic, group)
    ours = await _listing(groupcoord_bootstrap, topic, group)
    assert kafka[OFFSETS_TOPIC] == (True, DEFAULT_OFFSETS_PARTITIONS)
    assert ours[OFFSETS_TOPIC] == kafka[OFFSETS_TOPIC]
    assert ours[topic] == kafka[topic] == (False, 1)
