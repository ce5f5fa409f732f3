"""DescribeTopicPartitions (paging with its cursor), DescribeLogDirs and IncrementalAlterConfigs over the wire
against a running broker, through the raw protocol client (no groupcoord code on the client side)."""

from __future__ import annotations

import asyncio

import pytest
from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest, DescribableLogDirTopic
from kio.schema.describe_topic_partitions.v0.request import Cursor, DescribeTopicPartitionsRequest, TopicRequest
from kio.schema.errors import ErrorCode
from kio.schema.incremental_alter_configs.v1 import request as iac
from kio.schema.types import TopicName
from kio.static.primitive import i8, i32
from kafka.admin import KafkaAdminClient, NewTopic

from groupcoord.coordinator.apis.describe_topic_partitions import TOPIC_AUTHORIZED_OPERATIONS

from tests.conformance.wire import Connection

TOPIC, BROKER, GROUP = 2, 4, 32


def _create(bootstrap: str, **topics: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, count, 1) for name, count in topics.items()])
    finally:
        admin.close()


async def test_describe_topic_partitions_pages_with_its_cursor(groupcoord_broker):
    _create(groupcoord_broker.bootstrap_servers, alpha=3, beta=2, gamma=1)
    connection = await Connection.open(groupcoord_broker.bootstrap_servers)
    try:
        asked = tuple(TopicRequest(name=TopicName(n)) for n in ("gamma", "alpha", "beta", "nope"))
        first = await connection.send(DescribeTopicPartitionsRequest(topics=asked, response_partition_limit=i32(4),
                                                                     cursor=None))
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == \
            [("alpha", [0, 1, 2]), ("beta", [0])]
        assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("beta", 1)
        assert first.topics[0].topic_authorized_operations == TOPIC_AUTHORIZED_OPERATIONS
        cursor = Cursor(topic_name=first.next_cursor.topic_name, partition_index=first.next_cursor.partition_index)
        rest = await connection.send(DescribeTopicPartitionsRequest(topics=asked, response_partition_limit=i32(4),
                                                                    cursor=cursor))
        assert [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in rest.topics] == [
            ("beta", ErrorCode.none, [1]), ("gamma", ErrorCode.none, [0]),
            ("nope", ErrorCode.unknown_topic_or_partition, [])]
        assert rest.next_cursor is None
        bad = await connection.send(DescribeTopicPartitionsRequest(
            topics=(TopicRequest(name=TopicName("alpha")),), response_partition_limit=i32(10),
            cursor=Cursor(topic_name=TopicName("beta"), partition_index=i32(0))))
        assert [t.error_code for t in bad.topics] == [ErrorCode.invalid_request]
    finally:
        await connection.close()


async def test_describe_log_dirs_lists_the_data_directory_and_its_partitions(groupcoord_broker):
    _create(groupcoord_broker.bootstrap_servers, sized=2)
    connection = await Connection.open(groupcoord_broker.bootstrap_servers)
    try:
        response = await connection.send(DescribeLogDirsRequest(topics=(
            DescribableLogDirTopic(topic=TopicName("sized"), partitions=(i32(0), i32(1), i32(7))),)))
        [result] = response.results
        assert result.log_dir == str(groupcoord_broker.data_dir.resolve())
        assert result.total_bytes > 0 and result.usable_bytes > 0
        [topic] = result.topics
        assert sorted(p.partition_index for p in topic.partitions) == [0, 1]
        every = await connection.send(DescribeLogDirsRequest(topics=None))
        names = {t.name for t in every.results[0].topics}
        assert {"sized", "__consumer_offsets"} <= names
    finally:
        await connection.close()


async def test_incremental_alter_configs_applies_validates_and_refuses(groupcoord_broker):
    _create(groupcoord_broker.bootstrap_servers, tuned=1)

    def resource(kind, name, *ops):
        return iac.AlterConfigsResource(resource_type=i8(kind), resource_name=name, configs=tuple(
            iac.AlterableConfig(name=n, config_operation=i8(op), value=v) for n, op, v in ops))

    connection = await Connection.open(groupcoord_broker.bootstrap_servers)
    try:
        response = await connection.send(iac.IncrementalAlterConfigsRequest(resources=(
            resource(TOPIC, "tuned", ("retention.ms", 0, "60000"), ("cleanup.policy", 2, "compact")),
            resource(TOPIC, "tuned-missing", ("retention.ms", 0, "1")),
            resource(TOPIC, "tuned", ("retention.ms", 2, "1")),
            resource(BROKER, "1", ("num.partitions", 0, "3")),
            resource(BROKER, "", ("log.retention.ms", 0, "120000")),
            resource(GROUP, "g", ("consumer.session.timeout.ms", 0, "1")),
        ), validate_only=False))
        assert [r.error_code for r in response.responses] == [
            ErrorCode.none, ErrorCode.unknown_topic_or_partition, ErrorCode.invalid_config,
            ErrorCode.invalid_request, ErrorCode.none, ErrorCode.invalid_config]
    finally:
        await connection.close()
    topic = groupcoord_broker.dataplane.topics.get("tuned")
    assert topic.configs == {"retention.ms": "60000", "cleanup.policy": "delete,compact"}
    assert topic.log_config.retention_ms == 60000 and topic.log_config.compact
    log = groupcoord_broker.log_manager.get("tuned", 0)
    assert log.config.retention_ms == 60000  # applied to the open log, not only recorded


@pytest.mark.groupcoord(group_consumer_min_session_timeout_ms=1000, group_consumer_min_heartbeat_interval_ms=200)
async def test_a_groups_session_timeout_set_over_the_wire_fences_its_silent_member(groupcoord_broker):
    """consumer.session.timeout.ms and consumer.heartbeat.interval.ms set with IncrementalAlterConfigs on one
    group take effect: its member is told the interval and, silent, is fenced after the group's 1.5 s, while
    a member of a group without configs, silent as long, keeps the broker's 45 s."""
    from datetime import timedelta

    from kio.schema.consumer_group_heartbeat.v0 import request as hb

    _create(groupcoord_broker.bootstrap_servers, beats=2)
    connection = await Connection.open(groupcoord_broker.bootstrap_servers)

    async def heartbeat(group: str, member_id: str = "", epoch: int = 0):
        return await connection.send(hb.ConsumerGroupHeartbeatRequest(
            group_id=group, member_id=member_id, member_epoch=i32(epoch),
            rebalance_timeout=timedelta(seconds=30), subscribed_topic_names=(TopicName("beats"),),
            server_assignor=None, topic_partitions=() if epoch == 0 else None))

    try:
        response = await connection.send(iac.IncrementalAlterConfigsRequest(resources=(
            iac.AlterConfigsResource(resource_type=i8(GROUP), resource_name="short", configs=(
                iac.AlterableConfig(name="consumer.session.timeout.ms", config_operation=i8(0), value="1500"),
                iac.AlterableConfig(name="consumer.heartbeat.interval.ms", config_operation=i8(0), value="500"))),
        ), validate_only=False))
        assert [r.error_code for r in response.responses] == [ErrorCode.none]
        short, plain = await heartbeat("short"), await heartbeat("plain")
        assert short.error_code == plain.error_code == ErrorCode.none
        assert short.heartbeat_interval == timedelta(milliseconds=500)
        assert plain.heartbeat_interval == timedelta(milliseconds=groupcoord_broker.config.group_consumer_heartbeat_interval_ms)
        await asyncio.sleep(3.0)  # twice the group's session timeout, far below the broker's
        late_short = await heartbeat("short", short.member_id, short.member_epoch)
        late_plain = await heartbeat("plain", plain.member_id, plain.member_epoch)
        assert late_short.error_code == ErrorCode.unknown_member_id
        assert late_plain.error_code == ErrorCode.none
    finally:
        await connection.close()
