"""The pipeline reads the `__consumer_offsets` partitions a real Apache Kafka broker wrote, and finds the
offsets Kafka itself reports: the data source is not tied to the files groupcoord writes."""

import uuid

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.pipeline.jobs.rebalances import generations
from groupcoord.pipeline.jobs.snapshot import snapshot
from groupcoord.pipeline.session import read_offsets
from tests.reference.kafka_broker import SHARED_BROKER
from tests.reference.kafka_groups import copy_offsets_partitions, form_group_and_commit

pytestmark = [pytest.mark.reference, pytest.mark.timeout(240)]
FAR_FUTURE = 4_000_000_000_000


def test_snapshot_of_a_kafka_written_log_matches_kafkas_offset_fetch(spark, kafka_reference, tmp_path):
    run = uuid.uuid4().hex[:8]
    topic, group = f"pipeline-kafka-{run}", f"pipeline-kafka-group-{run}"
    admin = AdminClient({"bootstrap.servers": kafka_reference})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    form_group_and_commit(kafka_reference, group, topic)
    request = [ConsumerGroupTopicPartitions(group)]
    fetched = admin.list_consumer_group_offsets(request, request_timeout=30)[group].result(30)
    expected = {(tp.topic, tp.partition): (tp.offset, tp.metadata) for tp in fetched.topic_partitions}
    assert len(expected) == 3

    data = tmp_path / "kafka-data"
    copy_offsets_partitions(SHARED_BROKER.broker.workdir / "data", data, [group])
    df = read_offsets(spark, str(data)).cache()
    try:
        # librdkafka commits metadata with its C string's NUL terminator and drops it again when it reads
        # offsets back; the log (and so the pipeline) holds what was sent.
        offsets = {(r["topic"], r["partition"]): (r["offset"], r["metadata"].removesuffix("\0"))
                   for r in snapshot(df, FAR_FUTURE).filter(f"`group` = '{group}'").collect()}
        assert offsets == expected
        seen = {r["generation"]: r["member_count"] for r in generations(df).filter(f"`group` = '{group}'").collect()}
        assert seen and seen[max(seen)] == 0, "the consumer's leave is the last, empty generation"
        # Kafka 4's coordinator also records the group as created, empty, at generation 0
        assert all(count == 1 for generation, count in seen.items() if 0 < generation < max(seen)), seen
        assert seen.get(0, 0) == 0 and max(seen) >= 2, seen
    finally:
        df.unpersist()
