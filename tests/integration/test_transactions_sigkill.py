"""The transaction coordinator across a SIGKILL of the daemon: an open transaction and a committed one are
both in the logs when the process dies; after the restart the committed one reads as committed, and the open
one is aborted (with a bumped epoch) when its producer's next incarnation initialises, so a read_committed
consumer never sees its records."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.daemon import Daemon

pytestmark = pytest.mark.timeout(120)

TOPIC = "eos-out"


def read_committed(bootstrap: str, expected: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, 0)])
    seen: list[bytes] = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and len(seen) < expected:
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            seen.append(message.value())
    # a little longer, to see that nothing else arrives
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        message = consumer.poll(0.1)
        if message is not None and not message.error():
            seen.append(message.value())
    consumer.close()
    return seen


def test_open_and_committed_transactions_across_a_sigkill(tmp_path):
    daemon = Daemon(tmp_path / "data", fsync="always").start()
    try:
        admin = AdminClient({"bootstrap.servers": daemon.bootstrap_servers})
        for name in (TOPIC, "eos-in"):
            admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
        group_consumer = Consumer({"bootstrap.servers": daemon.bootstrap_servers, "group.id": "etl"})
        done = Producer({"bootstrap.servers": daemon.bootstrap_servers, "transactional.id": "etl-done"})
        done.init_transactions(30)
        done.begin_transaction()
        for i in range(3):
            done.produce(TOPIC, f"done-{i}".encode(), partition=0)
        done.send_offsets_to_transaction([TopicPartition("eos-in", 0, 3)], group_consumer.consumer_group_metadata(), 30)
        done.commit_transaction(30)
        group_consumer.close()
        hanging = Producer({"bootstrap.servers": daemon.bootstrap_servers, "transactional.id": "etl-hanging",
                            "transaction.timeout.ms": 600000})
        hanging.init_transactions(30)
        hanging.begin_transaction()
        for i in range(2):
            hanging.produce(TOPIC, f"hanging-{i}".encode(), partition=0)
        assert hanging.flush(30) == 0
        daemon.kill()

        daemon.start()
        assert sorted(read_committed(daemon.bootstrap_servers, 3)) == [b"done-0", b"done-1", b"done-2"]
        restarted = Producer({"bootstrap.servers": daemon.bootstrap_servers, "transactional.id": "etl-hanging"})
        restarted.init_transactions(60)  # retried through CONCURRENT_TRANSACTIONS while the old one is aborted
        restarted.begin_transaction()
        restarted.produce(TOPIC, b"after", partition=0)
        restarted.commit_transaction(30)
        assert sorted(read_committed(daemon.bootstrap_servers, 4)) == [b"after", b"done-0", b"done-1", b"done-2"]
        offsets = Consumer({"bootstrap.servers": daemon.bootstrap_servers, "group.id": "etl"})
        assert offsets.committed([TopicPartition("eos-in", 0)], 10)[0].offset == 3
        offsets.close()
    finally:
        daemon.kill()
