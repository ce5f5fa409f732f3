"""Incremental fetch sessions (KIP-227) against real clients, on a six-partition topic.

kafka-python keeps a fetch session per broker: it must open one with us, advance it with incremental
fetches, and still read every partition completely and in order. librdkafka (confluent-kafka) never uses
sessions (its Fetch always carries session id 0 and epoch -1, see rdkafka_fetcher.c), so it must read the
same topic sessionless, opening none.
"""
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer
from kafka.structs import TopicPartition as KpTopicPartition

PARTITIONS = 6
PER_PARTITION = 200
DEADLINE_S = 30


@pytest.fixture
def six_partitions(groupcoord_broker):
    """A six-partition topic holding "<partition>-<seq>" values, seq 0..PER_PARTITION-1 in each."""
    bootstrap = groupcoord_broker.bootstrap_servers
    topic = f"sessions-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for seq in range(PER_PARTITION):
        for partition in range(PARTITIONS):
            producer.produce(topic, value=f"{partition}-{seq}".encode(), partition=partition)
    assert producer.flush(DEADLINE_S) == 0
    return topic


def everything(topic_partitions=PARTITIONS):
    return {p: [f"{p}-{seq}" for seq in range(PER_PARTITION)] for p in range(topic_partitions)}


def sessions_of(cache, topic):
    return [s for s in cache.sessions() if {c.ref.topic for c in tuple(s.partitions.values())} == {topic}]


def test_kafka_python_reads_six_partitions_through_one_incremental_session(groupcoord_broker, six_partitions):
    topic, cache = six_partitions, groupcoord_broker.dataplane.fetch_sessions
    created_before = cache.created
    # Small per-partition limits make many fetches, so partitions take turns within the session.
    consumer = KafkaConsumer(bootstrap_servers=groupcoord_broker.bootstrap_servers, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=100, max_partition_fetch_bytes=1024)
    try:
        consumer.assign([KpTopicPartition(topic, p) for p in range(PARTITIONS)])
        got, deadline = {p: [] for p in range(PARTITIONS)}, time.monotonic() + DEADLINE_S
        while sum(map(len, got.values())) < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=500).items():
                got[tp.partition].extend(r.value.decode() for r in records)
        assert got == everything()
        ours = sessions_of(cache, topic)
        assert cache.created > created_before
        assert len(ours) == 1, "the consumer should fetch through one session"
        assert len(ours[0].partitions) == PARTITIONS
        assert ours[0].epoch > 2, "the consumer should have sent incremental fetches on its session"
    finally:
        consumer.close()


def test_confluent_kafka_reads_six_partitions_without_a_session(groupcoord_broker, six_partitions):
    topic, cache = six_partitions, groupcoord_broker.dataplane.fetch_sessions
    created_before = cache.created
    consumer = Consumer({"bootstrap.servers": groupcoord_broker.bootstrap_servers, "group.id": f"g-{topic}",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100, "max.partition.fetch.bytes": 1024})
    try:
        consumer.assign([CkTopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got, deadline = {p: [] for p in range(PARTITIONS)}, time.monotonic() + DEADLINE_S
        while sum(map(len, got.values())) < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=500, timeout=0.5):
                assert message.error() is None, message.error()
                got[message.partition()].append(message.value().decode())
        assert got == everything()
        assert cache.created == created_before and sessions_of(cache, topic) == []
    finally:
        consumer.close()
