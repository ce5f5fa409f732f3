"""kafka-python group members for the live-broker tests of the admin CLI and the metrics endpoint.

A consumer created with its topic joins before it has the topic's metadata when the topic was just created; it
then joins a second time once the metadata arrives. kafka-python 3.0.x can lose that second join's assignment
if a short poll() times out mid-join (it stops heartbeating and is expired). The member therefore loads the
topic's metadata first and subscribes afterwards, so its first join already sees every partition. That is what
a long-running application looks like anyway.
"""

from __future__ import annotations

import time

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import CommitFailedError, RebalanceInProgressError
from kafka.structs import OffsetAndMetadata

JOIN_DEADLINE_S = 30.0


def subscribed_consumer(bootstrap: str, topic: str, group: str, client_id: str) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, client_id=client_id, enable_auto_commit=False,
        auto_offset_reset="earliest", heartbeat_interval_ms=300, session_timeout_ms=10000,
    )
    deadline = time.monotonic() + JOIN_DEADLINE_S
    while not consumer.partitions_for_topic(topic):
        assert time.monotonic() < deadline, f"topic {topic} never appeared in the metadata"
        time.sleep(0.05)
    consumer.subscribe([topic])
    return consumer


def poll_until(consumers: list[KafkaConsumer], settled, deadline_s: float = JOIN_DEADLINE_S) -> None:
    """Poll every member in turn until `settled()`; polls are long enough to cover a whole join round trip."""
    deadline = time.monotonic() + deadline_s
    while not settled():
        assert time.monotonic() < deadline, "the group did not settle"
        for consumer in consumers:
            consumer.poll(timeout_ms=200)


def commit_when_settled(consumer: KafkaConsumer, topic: str, offsets: dict[int, int],
                        metadata: dict[int, str] | None = None) -> None:
    """Commit as an application does: a commit refused because the member is still rebalancing (kafka-python may
    rejoin once right after its first join when the topic's metadata changes) is retried after a poll. Once it
    succeeds the member holds the current generation, and as no poll follows, it starts no new rebalance."""
    deadline = time.monotonic() + JOIN_DEADLINE_S
    metadata = metadata or {}
    request = {TopicPartition(topic, p): OffsetAndMetadata(o, metadata.get(p, ""), -1) for p, o in offsets.items()}
    while True:
        try:
            consumer.commit(request)
            return
        except (RebalanceInProgressError, CommitFailedError):
            assert time.monotonic() < deadline, "the member never settled enough to commit"
            consumer.poll(timeout_ms=200)
