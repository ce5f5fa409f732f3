"""`__consumer_offsets` is readable like any topic, as Burrow and `kcat -t __consumer_offsets` expect:
a stock consumer reads the coordinator's records and decodes them with Kafka's layout; writes are refused."""

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, decode_key, decode_value


def test_a_plain_consumer_reads_the_commits_of_a_group_from_its_offsets_partition(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("orders", 3, 1)])["orders"].result(timeout=30)
    commits = [TopicPartition("orders", p, 100 + p) for p in range(3)]
    admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions("billing", commits)])["billing"].result(timeout=30)

    partition = partition_for("billing", 50)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "offsets-reader", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("__consumer_offsets", partition, 0)])
        seen = {}
        for _ in range(100):
            message = consumer.poll(0.2)
            if message is None:
                if len(seen) == 3:
                    break
                continue
            assert message.error() is None, message.error()
            key = decode_key(message.key())
            if isinstance(key, OffsetCommitKey) and key.group == "billing":
                seen[key.partition] = decode_value(key, message.value()).offset
    finally:
        consumer.close()
    assert seen == {0: 100, 1: 101, 2: 102}


def test_clients_cannot_write_to_the_offsets_topic(groupcoord_broker):
    producer = Producer({"bootstrap.servers": groupcoord_broker.bootstrap_servers, "message.timeout.ms": 5000})
    failures = []
    producer.produce("__consumer_offsets", b"forged", partition=0, on_delivery=lambda err, msg: failures.append(err))
    producer.flush(15)
    assert len(failures) == 1 and failures[0] is not None
    assert failures[0].code() == 17  # INVALID_TOPIC_EXCEPTION, as Kafka answers "Cannot append to internal topic"


def test_the_offsets_topic_cannot_be_deleted(groupcoord_broker):
    admin = AdminClient({"bootstrap.servers": groupcoord_broker.bootstrap_servers})
    with pytest.raises(KafkaException):
        admin.delete_topics(["__consumer_offsets"])["__consumer_offsets"].result(timeout=30)
