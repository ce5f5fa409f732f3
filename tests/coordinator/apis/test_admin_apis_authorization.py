"""The checks Kafka's KafkaApis makes on DeleteRecords, DescribeLogDirs, DescribeTopicPartitions and the two
AlterConfigs, as a principal with some ACLs and one with none see them."""

import pytest

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.security.acl import AclOperation as Op, ResourceType as RT
from groupcoord.coordinator.security.authorizer import STANDARD_AUTHORIZER as STANDARD
from groupcoord.protocol.errors import ErrorCode as E
from tests.support.principals import allow, call_as

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def broker(tmp_path):
    async with Broker(data_dir=tmp_path, authorizer_class_name=STANDARD, super_users="User:admin") as b:
        b.authorizer.create_acls([allow("User:alice", RT.TOPIC, "orders", Op.DELETE),
                                  allow("User:alice", RT.TOPIC, "orders", Op.DESCRIBE),
                                  allow("User:alice", RT.TOPIC, "orders", Op.ALTER_CONFIGS),
                                  allow("User:ops", RT.CLUSTER, "kafka-cluster", Op.DESCRIBE),
                                  allow("User:ops", RT.CLUSTER, "kafka-cluster", Op.ALTER_CONFIGS)])
        for topic in ("orders", "secret"):
            await b.dataplane.topics.create(topic, 1)
        yield b


async def test_delete_records_needs_delete_on_the_topic(broker):
    r = await call_as(broker, "User:alice", 21, 2, {"topics": [{"name": n, "partitions": [
        {"partition_index": 0, "offset": 0}]} for n in ("orders", "secret")], "timeout": 1000})
    assert {t.name: t.partitions[0].error_code for t in r.topics} == {
        "orders": E.none, "secret": E.topic_authorization_failed}


async def test_describe_log_dirs_needs_describe_on_the_cluster(broker):
    denied = await call_as(broker, "User:alice", 35, 4, {"topics": None})
    assert (denied.error_code, denied.results) == (E.cluster_authorization_failed, ())
    allowed = await call_as(broker, "User:ops", 35, 4, {"topics": None})
    assert allowed.error_code == E.none and allowed.results


async def test_describe_topic_partitions_needs_describe_on_each_topic(broker):
    asked = await call_as(broker, "User:alice", 75, 0, {"topics": [{"name": "orders"}, {"name": "secret"}],
                                                        "response_partition_limit": 100, "cursor": None})
    assert [(t.name, t.error_code) for t in asked.topics] == [("orders", E.none),
                                                              ("secret", E.topic_authorization_failed)]
    every = await call_as(broker, "User:alice", 75, 0, {"topics": [], "response_partition_limit": 100,
                                                        "cursor": None})
    assert [t.name for t in every.topics] == ["orders"]


@pytest.mark.parametrize("api_key, version", [(44, 1), (33, 2)])
async def test_alter_configs_need_alter_configs_on_the_resource(broker, api_key, version):
    op = {"config_operation": 0} if api_key == 44 else {}
    resources = [{"resource_type": 2, "resource_name": n, "configs": [{"name": "retention.ms", "value": "1000", **op}]}
                 for n in ("orders", "secret")]
    resources.append({"resource_type": 4, "resource_name": "1", "configs": [
        {"name": "log.retention.ms", "value": "1000", **op}]})
    r = await call_as(broker, "User:alice", api_key, version, {"resources": resources, "validate_only": False})
    assert [(x.resource_name, x.error_code) for x in r.responses] == [
        ("orders", E.none), ("secret", E.topic_authorization_failed), ("1", E.cluster_authorization_failed)]
    ops = await call_as(broker, "User:ops", api_key, version, {"resources": resources[2:], "validate_only": True})
    assert [x.error_code for x in ops.responses] == [E.none]


async def test_client_quotas_need_describe_configs_and_alter_configs_on_the_cluster(broker):
    """KafkaApis.handleDescribeClientQuotasRequest checks DESCRIBE_CONFIGS on the cluster, ControllerApis'
    handleAlterClientQuotas ALTER_CONFIGS (ALTER_CONFIGS implies DESCRIBE_CONFIGS)."""
    entry = {"entity": [{"entity_type": "user", "entity_name": "bob"}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}
    denied = await call_as(broker, "User:alice", 49, 1, {"entries": [entry], "validate_only": False})
    assert [(e.error_code, e.error_message) for e in denied.entries] == [
        (E.cluster_authorization_failed, "Cluster authorization failed.")]
    allowed = await call_as(broker, "User:ops", 49, 1, {"entries": [entry], "validate_only": False})
    assert [e.error_code for e in allowed.entries] == [E.none]
    query = {"components": [{"entity_type": "user", "match_type": 2, "match": None}], "strict": False}
    refused = await call_as(broker, "User:alice", 48, 1, query)
    assert (refused.error_code, refused.entries) == (E.cluster_authorization_failed, None)
    described = await call_as(broker, "User:ops", 48, 1, query)
    assert described.error_code == E.none and [v.value for v in described.entries[0].values] == [1024.0]
