"""groupcoord opens the ``__consumer_offsets`` partitions a real Kafka broker wrote and serves what Kafka
served: a user moving from Kafka keeps their consumer groups (classic and KIP-848) and committed offsets by
copying the directories.

Kafka's live partition directories are copied as they are (its preallocated 10 MiB indexes, its
``leader-epoch-checkpoint`` and ``partition.metadata``, no clean-shutdown marker), so the copy is also a
recovery test on files we did not write.
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.coordinator.broker import run_in_thread
from tests.reference.kafka_broker import SHARED_BROKER
from tests.reference.kafka_groups import copy_offsets_partitions, form_group_and_commit

pytestmark = pytest.mark.reference

def committed(admin: AdminClient, group: str) -> list[tuple[str, int, int, str | None, int | None]]:
    request = [ConsumerGroupTopicPartitions(group)]
    answer = admin.list_consumer_group_offsets(request, request_timeout=30)[group].result(30)
    return sorted((tp.topic, tp.partition, tp.offset, tp.metadata, tp.leader_epoch) for tp in answer.topic_partitions)


def described(admin: AdminClient, group: str) -> tuple[str, str, bool, int]:
    description = admin.describe_consumer_groups([group], request_timeout=30)[group].result(30)
    return (description.state.name, description.type.name, description.is_simple_consumer_group,
            len(description.members))


def test_groupcoord_serves_the_offsets_kafka_committed(kafka_reference, tmp_path):
    run = uuid.uuid4().hex[:8]
    topic, group, simple = f"migrating-{run}", f"orders-service-{run}", f"offset-tool-{run}"
    kip848 = f"payments-service-{run}"  # a KIP-848 consumer group: its ConsumerGroup* records come along
    kafka_admin = AdminClient({"bootstrap.servers": kafka_reference})
    kafka_admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    form_group_and_commit(kafka_reference, group, topic)
    form_group_and_commit(kafka_reference, kip848, topic, group_protocol="consumer")
    kafka_admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(simple, [TopicPartition(topic, 1, 42)])])[simple].result(30)
    groups = (group, simple, kip848)
    expected = {g: committed(kafka_admin, g) for g in groups}
    expected_description = {g: described(kafka_admin, g) for g in (group, kip848)}
    assert expected_description[kip848][1] == "CONSUMER"
    assert [(t, p, o) for t, p, o, _, _ in expected[group]] == [(topic, p, 100 + p) for p in range(3)]

    data = tmp_path / "data"
    copy_offsets_partitions(SHARED_BROKER.broker.workdir / "data", data, list(groups))
    with run_in_thread(data_dir=data, listen="127.0.0.1:0", metrics_port=-1) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        assert {g: committed(admin, g) for g in groups} == expected
        assert {g: described(admin, g) for g in (group, kip848)} == expected_description
