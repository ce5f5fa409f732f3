"""Topic administration through AdminClient (librdkafka) as operators use it."""
import uuid

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic, ResourceType


@pytest.fixture
def admin(groupcoord_broker):
    return AdminClient({"bootstrap.servers": groupcoord_broker.bootstrap_servers})


def result(futures):
    return {key: future.result(30) for key, future in futures.items()}


def error_of(future):
    with pytest.raises(KafkaException) as info:
        future.result(30)
    return info.value.args[0]


def test_create_describe_grow_and_delete_a_topic(admin):
    name = f"admin-{uuid.uuid4().hex[:8]}"
    result(admin.create_topics([NewTopic(name, 3, 1, config={"retention.ms": "3600000"})]))
    assert len(admin.list_topics(timeout=30).topics[name].partitions) == 3

    [configs] = result(admin.describe_configs([ConfigResource(ResourceType.TOPIC, name)])).values()
    assert configs["retention.ms"].value == "3600000"
    assert not configs["retention.ms"].is_default
    assert configs["cleanup.policy"].value == "delete" and configs["cleanup.policy"].is_default

    result(admin.create_partitions([NewPartitions(name, 5)]))
    assert len(admin.list_topics(timeout=30).topics[name].partitions) == 5

    result(admin.delete_topics([name]))
    assert name not in admin.list_topics(timeout=30).topics


def test_creation_errors_match_a_single_node_kafka(admin):
    name = f"admin-{uuid.uuid4().hex[:8]}"
    futures = admin.create_topics([NewTopic(name, 1, 3), NewTopic("bad name", 1, 1)])
    assert error_of(futures[name]).name() == "INVALID_REPLICATION_FACTOR"
    assert error_of(futures["bad name"]).name() == "TOPIC_EXCEPTION"
    result(admin.create_topics([NewTopic(name, 1, 1)]))
    assert error_of(admin.create_topics([NewTopic(name, 1, 1)])[name]).name() == "TOPIC_ALREADY_EXISTS"


def test_validate_only_creates_nothing(admin):
    name = f"admin-{uuid.uuid4().hex[:8]}"
    result(admin.create_topics([NewTopic(name, 2, 1)], validate_only=True))
    assert name not in admin.list_topics(timeout=30).topics


def test_broker_configs_are_described(admin):
    [configs] = result(admin.describe_configs([ConfigResource(ResourceType.BROKER, "1")])).values()
    assert configs["auto.create.topics.enable"].value == "true"
    assert configs["num.partitions"].value == "1"
