"""Exactly once with stock Python clients against the daemon: confluent-kafka's consume-transform-produce
loop (transactional producer, send_offsets_to_transaction, a read_committed consumer, one deliberate abort)
and aiokafka's transactional producer read back by a read_committed aiokafka consumer."""
from __future__ import annotations

import asyncio

import pytest

from tests.integration.eos_support import (PARTITIONS, Pipeline, committed_offsets, create_topics, exactly_once,
                                           produce_input, read_all)
from tests.support.daemon import Daemon

pytestmark = pytest.mark.timeout(180)

RECORDS = 300


@pytest.fixture
def daemon(tmp_path):
    d = Daemon(tmp_path / "data").start()
    yield d
    d.kill()


def test_confluent_kafka_consume_transform_produce_is_exactly_once(daemon):
    bootstrap = daemon.bootstrap_servers
    create_topics(bootstrap, "in", "out")
    produce_input(bootstrap, "in", RECORDS)
    app = Pipeline(bootstrap, "in", "out", "etl", "etl-1")
    processed = aborted = transactions = 0
    while processed < RECORDS:
        messages = app.poll_batch()
        if not messages:
            continue
        nxt = app.begin_and_write(messages)
        transactions += 1
        if transactions == 2:
            assert app.producer.flush(30) == 0
            app.producer.abort_transaction(30)
            aborted += len(messages)
            app.rewind(messages)
            continue
        app.send_offsets(nxt)
        app.producer.commit_transaction(30)
        processed += len(messages)
    app.consumer.close()
    assert aborted > 0
    exactly_once(read_all(bootstrap, "out", "read_committed", RECORDS), RECORDS)
    assert len(read_all(bootstrap, "out", "read_uncommitted", RECORDS + aborted)) == RECORDS + aborted
    assert sum(committed_offsets(bootstrap, "etl", "in").values()) == RECORDS


async def test_aiokafka_transactional_producer_with_a_read_committed_consumer(daemon):
    aiokafka = pytest.importorskip("aiokafka")
    bootstrap = daemon.bootstrap_servers
    create_topics(bootstrap, "ai-out")
    producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id="ai-txn")
    await producer.start()
    try:
        async with producer.transaction():
            for i in range(10):
                await producer.send("ai-out", f"committed-{i}".encode(), partition=i % PARTITIONS)
        await producer.begin_transaction()
        for i in range(5):
            await producer.send("ai-out", f"aborted-{i}".encode(), partition=i % PARTITIONS)
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send("ai-out", b"committed-last", partition=0)
    finally:
        await producer.stop()

    async def read(isolation: str, expected: int) -> list[bytes]:
        consumer = aiokafka.AIOKafkaConsumer("ai-out", bootstrap_servers=bootstrap, isolation_level=isolation,
                                             auto_offset_reset="earliest", group_id=None)
        await consumer.start()
        seen: list[bytes] = []
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 20
            while loop.time() < deadline and len(seen) < expected:
                batches = await consumer.getmany(timeout_ms=300)
                seen += [m.value for ms in batches.values() for m in ms]
            batches = await consumer.getmany(timeout_ms=500)
            seen += [m.value for ms in batches.values() for m in ms]
        finally:
            await consumer.stop()
        return seen

    committed = await read("read_committed", 11)
    assert sorted(committed) == sorted([f"committed-{i}".encode() for i in range(10)] + [b"committed-last"])
    assert len(await read("read_uncommitted", 16)) == 16
