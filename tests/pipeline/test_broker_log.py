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
