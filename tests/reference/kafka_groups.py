"""Stock-client stories played against the Kafka reference, and copying the partitions they wrote."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition

from groupcoord.coordinator.groups.hashing import partition_for

OFFSETS_PARTITIONS = 50  # the reference broker's offsets.topic.num.partitions, and ours


def form_group_and_commit(bootstrap: str, group: str, topic: str, group_protocol: str = "classic") -> None:
    """One stock consumer joins (the classic protocol, or KIP-848's with "consumer"), commits, and leaves."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "group.protocol": group_protocol})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while len(consumer.assignment()) < 3 and time.monotonic() < deadline:
        consumer.poll(0.1)
    assert len(consumer.assignment()) == 3, "the consumer never got its assignment from Kafka"
    consumer.commit(offsets=[TopicPartition(topic, p, 100 + p, metadata=f"batch-{p}") for p in range(3)],
                    asynchronous=False)
    consumer.close()


def copy_offsets_partitions(kafka_data: Path, target: Path, groups: list[str]) -> None:
    target.mkdir()
    for partition in {partition_for(g, OFFSETS_PARTITIONS) for g in groups}:
        name = f"__consumer_offsets-{partition}"
        shutil.copytree(kafka_data / name, target / name)
