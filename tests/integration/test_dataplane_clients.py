"""Stock producers write, stock consumers read everything back: kafka-python, aiokafka and
confluent-kafka, every codec each client can use in this environment, idempotence on where supported.

Each client covers all five codecs (none, gzip, snappy, lz4, zstd); kafka-python compresses through
python-snappy, lz4 and zstandard, which the project environment installs for it.
"""
import asyncio
import time
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition as AioTopicPartition
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition as KpTopicPartition

MESSAGES = 300
DEADLINE_S = 30


def expected(prefix):
    return [(f"k{i % 7}".encode(), f"{prefix}-{i}".encode()) for i in range(MESSAGES)]


def new_topic(client, codec):
    return f"{client}-{codec}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def bootstrap(groupcoord_broker):
    return groupcoord_broker.bootstrap_servers


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_kafka_python_idempotent_round_trip(bootstrap, codec):
    topic = new_topic("kp", codec)
    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, acks="all", linger_ms=5,
                             enable_idempotence=True)
    try:
        for key, value in expected(topic):
            producer.send(topic, key=key, value=value)
        producer.flush(timeout=DEADLINE_S)
    finally:
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                             fetch_max_wait_ms=100)
    try:
        consumer.assign([KpTopicPartition(topic, 0)])
        got, deadline = [], time.monotonic() + DEADLINE_S
        while len(got) < MESSAGES and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend((r.key, r.value) for r in records)
        assert got == expected(topic)
    finally:
        consumer.close()


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_aiokafka_idempotent_round_trip(bootstrap, codec):
    topic = new_topic("aio", codec)

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, compression_type=codec,
                                    linger_ms=5)
        await producer.start()
        try:
            sends = [await producer.send(topic, key=k, value=v) for k, v in expected(topic)]
            offsets = [(await s).offset for s in sends]
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest", fetch_max_wait_ms=100)
        await consumer.start()
        try:
            tp = AioTopicPartition(topic, 0)
            consumer.assign([tp])
            got = []
            loop_deadline = time.monotonic() + DEADLINE_S
            while len(got) < MESSAGES and time.monotonic() < loop_deadline:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got.extend((r.key, r.value) for r in records)
            return offsets, got, (await consumer.end_offsets([tp]))[tp]
        finally:
            await consumer.stop()

    offsets, got, end = asyncio.run(asyncio.wait_for(run(), DEADLINE_S * 2))
    assert offsets == list(range(MESSAGES))
    assert got == expected(topic)
    assert end == MESSAGES


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_confluent_kafka_idempotent_round_trip(bootstrap, codec):
    topic = new_topic("ck", codec)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "compression.type": codec,
                         "linger.ms": 5})
    delivered = []
    for key, value in expected(topic):
        producer.produce(topic, key=key, value=value,
                         on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert producer.flush(DEADLINE_S) == 0
    assert [err for err, _ in delivered] == [None] * MESSAGES
    assert sorted(offset for _, offset in delivered) == list(range(MESSAGES))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "enable.auto.commit": False,
                         "fetch.wait.max.ms": 100})
    try:
        consumer.assign([CkTopicPartition(topic, 0, 0)])
        got, deadline = [], time.monotonic() + DEADLINE_S
        while len(got) < MESSAGES and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=500, timeout=0.5):
                assert message.error() is None, message.error()
                got.append((message.key(), message.value()))
        assert got == expected(topic)
    finally:
        consumer.close()


def test_records_from_one_client_are_read_by_the_others(bootstrap):
    topic = new_topic("mixed", "zstd")
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "compression.type": "zstd"})
    for key, value in expected(topic):
        producer.produce(topic, key=key, value=value)
    assert producer.flush(DEADLINE_S) == 0

    async def read_with_aiokafka():
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                    enable_auto_commit=False, group_id=None)
        await consumer.start()
        try:
            got = []
            deadline = time.monotonic() + DEADLINE_S
            while len(got) < MESSAGES and time.monotonic() < deadline:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got.extend((r.key, r.value, r.timestamp > 0) for r in records)
            return got
        finally:
            await consumer.stop()

    got = asyncio.run(read_with_aiokafka())
    assert [(k, v) for k, v, _ in got] == expected(topic)
    assert all(has_ts for _, _, has_ts in got)


def test_kafka_python_resolves_beginning_end_and_times(bootstrap):
    topic = new_topic("kp-offsets", "none")
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        for i in range(10):
            producer.send(topic, value=str(i).encode(), timestamp_ms=1_000_000 + i * 1000)
        producer.flush(timeout=DEADLINE_S)
    finally:
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tp = KpTopicPartition(topic, 0)
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 10}
        found = consumer.offsets_for_times({tp: 1_004_500})[tp]
        assert (found.offset, found.timestamp) == (5, 1_005_000)
        assert consumer.offsets_for_times({tp: 9_999_999})[tp] is None
    finally:
        consumer.close()


def test_megabytes_of_records_read_back_exactly_through_spliced_fetch_answers(bootstrap):
    """Fetch answers of megabytes reach the socket as views of what was read (protocol.framing.FrameParts),
    cut at a partial batch and spliced between the encoded parts: every record comes back byte for byte,
    over fetches limited by both max bytes and partition max bytes."""
    topic = new_topic("ck-big", None)
    count = 6000
    payloads = [(f"{i:08d}".encode() * 128)[:1000 + i % 97] for i in range(count)]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 64 * 1024})
    for value in payloads:
        producer.produce(topic, value=value)
    assert producer.flush(DEADLINE_S) == 0
    for fetch_max, partition_max in ((50 * 1024 * 1024, 1024 * 1024), (300 * 1024, 8 * 1024 * 1024)):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}-{fetch_max}",
                             "enable.auto.commit": False, "fetch.max.bytes": fetch_max,
                             "max.partition.fetch.bytes": partition_max, "message.max.bytes": 200_000})
        try:
            consumer.assign([CkTopicPartition(topic, 0, 0)])
            got, deadline = [], time.monotonic() + DEADLINE_S
            while len(got) < count and time.monotonic() < deadline:
                for message in consumer.consume(num_messages=1000, timeout=0.5):
                    assert message.error() is None, message.error()
                    got.append(message.value())
            assert got == payloads
        finally:
            consumer.close()
