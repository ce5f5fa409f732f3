"""The pipeline reads the `__consumer_offsets` log the real broker wrote for a kafka-python consumer."""

import uuid

import pytest

from groupcoord.pipeline.jobs.rebalances import generations
from groupcoord.pipeline.jobs.snapshot import snapshot
from groupcoord.pipeline.session import read_offsets
from tests.support.kafka_python_members import commit_when_settled, poll_until, subscribed_consumer

pytestmark = pytest.mark.timeout(240)
FAR_FUTURE = 4_000_000_000_000


def _join_commit_and_leave(bootstrap: str, topic: str, group: str) -> None:
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)])
    finally:
        admin.close()
    consumer = subscribed_consumer(bootstrap, topic, group, "pipeline-test")
    try:
        poll_until([consumer], lambda: consumer.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)})
        commit_when_settled(consumer, topic, {0: 5}, {0: "first"})
        commit_when_settled(consumer, topic, {0: 9, 1: 3}, {0: "second"})
    finally:
        consumer.close()


def test_offsets_and_generations_committed_through_the_broker(spark, groupcoord_broker):
    topic, group = f"pipeline-{uuid.uuid4().hex[:8]}", f"pipeline-group-{uuid.uuid4().hex[:8]}"
    _join_commit_and_leave(groupcoord_broker.bootstrap_servers, topic, group)

    df = read_offsets(spark, str(groupcoord_broker.data_dir)).cache()
    try:
        offsets = {(r["topic"], r["partition"]): (r["offset"], r["metadata"])
                   for r in snapshot(df, FAR_FUTURE).filter(f"`group` = '{group}'").collect()}
        assert offsets == {(topic, 0): (9, "second"), (topic, 1): (3, "")}
        seen = {r["generation"]: r["member_count"] for r in generations(df).filter(f"`group` = '{group}'").collect()}
        # every generation the broker went through is seen (the client may rejoin once as metadata settles);
        # the consumer was alone in each, and its leave started a final, empty generation
        last = max(seen)
        assert sorted(seen) == list(range(1, last + 1))
        assert seen[last] == 0 and all(seen[g] == 1 for g in range(1, last))
    finally:
        df.unpersist()


def _transactional_commits(bootstrap: str, topic: str, group: str) -> None:
    """A consume-transform-produce producer: one transaction commits its offsets, the next aborts, the last
    is left open (its offsets pending in the log, no marker yet)."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{group}-tx",
                         "transaction.timeout.ms": 600000})
    producer.init_transactions(30)
    for offsets, end in (({0: 4, 1: 2}, producer.commit_transaction), ({0: 8}, producer.abort_transaction),
                         ({1: 6}, None)):
        producer.begin_transaction()
        producer.produce(topic, b"out", partition=0)
        producer.send_offsets_to_transaction([TopicPartition(topic, p, o) for p, o in offsets.items()],
                                             consumer.consumer_group_metadata(), 30)
        assert producer.flush(30) == 0
        if end is not None:
            end(30)
    consumer.close()


def test_a_snapshot_shows_only_committed_transactional_offsets(spark, groupcoord_broker):
    """The broker writes TxnOffsetCommit as a transactional batch and the marker as a control batch; the
    snapshot applies an offset at its COMMIT marker and never shows an aborted or still-open one."""
    topic, group = f"pipeline-txn-{uuid.uuid4().hex[:8]}", f"pipeline-txn-group-{uuid.uuid4().hex[:8]}"
    _transactional_commits(groupcoord_broker.bootstrap_servers, topic, group)

    df = read_offsets(spark, str(groupcoord_broker.data_dir)).cache()
    try:
        offsets = {(r["topic"], r["partition"]): r["offset"]
                   for r in snapshot(df, FAR_FUTURE).filter(f"`group` = '{group}'").collect()}
        assert offsets == {(topic, 0): 4, (topic, 1): 2}
        kinds = [r["kind"] for r in df.filter(f"`group` = '{group}' or kind in ('txn_commit', 'txn_abort')")
                 .select("kind").collect()]
        assert "txn_commit" in kinds and "txn_abort" in kinds
    finally:
        df.unpersist()
