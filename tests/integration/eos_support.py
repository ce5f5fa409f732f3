"""A confluent-kafka consume-transform-produce loop and its checks, shared by the exactly-once tests."""
from __future__ import annotations

import time
from collections import Counter

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 3


def create_topics(bootstrap: str, *names: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for name, future in admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names]).items():
        future.result(30)


def produce_input(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, key=f"k{i}".encode(), value=f"record-{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0


def transform(value: bytes) -> bytes:
    return value.upper()


class Pipeline:
    """One incarnation of the EOS application: a read_committed consumer assigned the input partitions
    (positions from the group's committed offsets) and a transactional producer whose init fences any
    previous incarnation and settles its open transaction."""

    def __init__(self, bootstrap: str, source: str, sink: str, group: str, txn_id: str,
                 init_timeout: float = 60.0) -> None:
        self.source, self.sink = source, sink
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                  "isolation.level": "read_committed", "enable.auto.commit": False,
                                  "auto.offset.reset": "earliest"})
        self.producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                                  "transaction.timeout.ms": 60000, "linger.ms": 2})
        self.producer.init_transactions(init_timeout)
        self.consumer.assign([TopicPartition(source, p) for p in range(PARTITIONS)])

    def poll_batch(self, max_records: int = 40, timeout: float = 1.0) -> list:
        messages = [m for m in self.consumer.consume(max_records, timeout) if not m.error()]
        return messages

    def begin_and_write(self, messages: list) -> dict[int, int]:
        """Open a transaction, write the transformed records, return the next offset per input partition."""
        self.producer.begin_transaction()
        nxt: dict[int, int] = {}
        for message in messages:
            self.producer.produce(self.sink, key=message.key(), value=transform(message.value()),
                                  partition=message.partition())
            nxt[message.partition()] = message.offset() + 1
        return nxt

    def send_offsets(self, nxt: dict[int, int]) -> None:
        self.producer.send_offsets_to_transaction(
            [TopicPartition(self.source, p, o) for p, o in nxt.items()], self.consumer.consumer_group_metadata(), 30)

    def rewind(self, messages: list) -> None:
        """After an abort, process these records again."""
        first: dict[int, int] = {}
        for message in messages:
            first.setdefault(message.partition(), message.offset())
        for partition, offset in first.items():
            self.consumer.seek(TopicPartition(self.source, partition, offset))

    def abandon(self) -> None:
        """Drop this incarnation without a goodbye (its broker was killed): purge what it still holds."""
        try:
            self.producer.purge()
        except KafkaException:
            pass


def read_all(bootstrap: str, topic: str, isolation: str, expected: int, timeout: float = 30.0) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                         "isolation.level": isolation, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen: list[bytes] = []
    deadline = time.monotonic() + timeout
    quiet_until = None
    while time.monotonic() < deadline:
        for message in consumer.consume(200, 0.2):
            if not message.error():
                seen.append(message.value())
        if len(seen) >= expected and quiet_until is None:
            quiet_until = time.monotonic() + 1.0
        if quiet_until is not None and time.monotonic() > quiet_until:
            break
    consumer.close()
    return seen


def read_per_partition(bootstrap: str, topic: str, expected: int) -> Counter:
    """How many committed records each partition of ``topic`` holds."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"counter-{time.monotonic_ns()}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    counts: Counter = Counter()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(counts.values()) < expected:
        for message in consumer.consume(200, 0.2):
            if not message.error():
                counts[message.partition()] += 1
    consumer.close()
    return counts


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    found = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], 30)
    consumer.close()
    return {tp.partition: tp.offset for tp in found}


def exactly_once(values: list[bytes], count: int) -> None:
    counts = Counter(values)
    missing = [i for i in range(count) if counts[transform(f"record-{i}".encode())] == 0]
    twice = {v: n for v, n in counts.items() if n > 1}
    assert not missing and not twice and len(values) == count, \
        f"{len(values)} read for {count}: missing {missing[:10]}, duplicated {list(twice.items())[:10]}"
