"""Kafka's DumpLogSegments (its offsets decoder) reads the share-group records groupcoord writes in
``__consumer_offsets``: ShareGroupMemberMetadata, ShareGroupMetadata, the target assignment, the current
assignment, ShareGroupStatePartitionMetadata and their tombstones, field for field."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.groups.hashing import partition_for
from tests.conformance import requests as rq
from tests.conformance.wire import Connection
from tests.reference.kafka_tools import dump_log_segments

pytestmark = [pytest.mark.reference, pytest.mark.timeout(120)]

GROUP = "share-interop"
TOPIC = "share-interop-queue"


async def _story(bootstrap: str) -> None:
    conn = await Connection.open(bootstrap)
    await conn.send(rq.create_topic(TOPIC, 2))
    response = await conn.send(rq.share_group_heartbeat(GROUP, "member-1", 0, topics=(TOPIC,)))
    for _ in range(100):
        response = await conn.send(rq.share_group_heartbeat(GROUP, "member-1", int(response.member_epoch)))
        if response.assignment is not None and response.assignment.topic_partitions:
            break
        await asyncio.sleep(0.02)
    await conn.send(rq.share_group_heartbeat(GROUP, "member-1", -1))
    await conn.send(rq.delete_groups(GROUP))


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("groupcoord-share-data")
    with run_in_thread(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, fsync="never") as broker:
        asyncio.run(_story(broker.bootstrap_servers))
    return data_dir


def test_kafka_decodes_our_share_group_records(written, kafka_tools):
    segment = written / f"__consumer_offsets-{partition_for(GROUP, 50)}" / f"{0:020d}.log"
    dump = dump_log_segments(kafka_tools, [segment], "--offsets-decoder", "--deep-iteration")
    assert dump.batches and all(b.is_valid for b in dump.batches), dump.output[-2000:]
    seen = [(r["key"]["type"], None if r["payload"] == "<DELETE>" else r["payload"]) for r in dump.records]
    types = [t for t, _ in seen]
    assert {"10", "11", "12", "13", "14", "15"} <= set(types), dump.output[-3000:]
    member = next(p for t, p in seen if t == "10" and p is not None)
    assert member["data"]["subscribedTopicNames"] == [TOPIC] and member["data"]["clientId"]
    current = [p for t, p in seen if t == "14" and p is not None][-1]
    assert [tp["partitions"] for tp in current["data"]["assignedPartitions"]] == [[0, 1]]
    states = [p["data"] for t, p in seen if t == "15" and p is not None]
    assert states[0]["initializingTopics"][0]["partitions"] == [0, 1]
    assert states[1]["initializedTopics"][0]["topicName"] == TOPIC
    assert states[-1]["deletingTopics"][0]["topicName"] == TOPIC  # DeleteGroups moved it to deleting first
    # the group's deletion ends with the tombstones of ShareGroupStatePartitionMetadata and ShareGroupMetadata
    assert seen[-2:] == [("15", None), ("11", None)], seen[-4:]
