"""IncrementalAlterConfigs and AlterConfigs as the data plane applies them: validated as Kafka validates,
applied to the logs, and still there after a restart."""
from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.config_changes import ConfigOp, OpType
from groupcoord.coordinator.dataplane.configs import ResourceType
from groupcoord.coordinator.dataplane.topic_configs import ConfigSource

SET, DELETE, APPEND, SUBTRACT = OpType.SET, OpType.DELETE, OpType.APPEND, OpType.SUBTRACT


def described(dataplane, kind, name):
    [result] = dataplane.describe_configs.describe([(kind, name, None)], include_synonyms=False)["results"]
    return {c["name"]: (c["value"], c["config_source"]) for c in result["configs"]}


async def test_topic_broker_and_group_configs_survive_a_restart(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    changes = dataplane.config_changes
    assert (await changes.incremental(ResourceType.TOPIC, "orders", [ConfigOp("retention.ms", SET, "1000"),
                                                                     ConfigOp("cleanup.policy", APPEND, "compact")],
                                      False)).error is ErrorCode.none
    assert (await changes.incremental(ResourceType.BROKER, "", [ConfigOp("log.segment.bytes", SET, "1048576")],
                                      False)).error is ErrorCode.none
    assert (await changes.incremental(ResourceType.GROUP, "app", [ConfigOp("consumer.session.timeout.ms", SET,
                                                                           "50000")], False)).error is ErrorCode.none

    dataplane = await node.restart()
    topic = described(dataplane, ResourceType.TOPIC, "orders")
    assert topic["retention.ms"] == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert topic["cleanup.policy"] == ("delete,compact", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert topic["segment.bytes"] == ("1048576", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert dataplane.topics.log("orders", 0).config.segment_bytes == 1048576
    assert described(dataplane, ResourceType.BROKER, "1")["log.segment.bytes"] == (
        "1048576", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert described(dataplane, ResourceType.GROUP, "app")["consumer.session.timeout.ms"] == (
        "50000", ConfigSource.GROUP_CONFIG)


async def test_validation_as_kafka_does_it(dataplane):
    await dataplane.topics.create("orders", 1)
    changes = dataplane.config_changes

    async def error(kind, name, *ops, validate_only=False):
        result = await changes.incremental(kind, name, [ConfigOp(*op) for op in ops], validate_only)
        return result.error, result.message

    assert (await error(ResourceType.TOPIC, "orders", ("retention.ms", SET, "soon")))[0] is ErrorCode.invalid_config
    assert (await error(ResourceType.TOPIC, "orders", ("no.such", SET, "1")))[1] == "Unknown topic config name: no.such"
    assert (await error(ResourceType.TOPIC, "orders", ("retention.ms", SET, "1"), ("retention.ms", DELETE, None)))[0] \
        is ErrorCode.invalid_request
    assert (await error(ResourceType.TOPIC, "orders", ("retention.ms", SUBTRACT, "1")))[0] is ErrorCode.invalid_config
    assert (await error(ResourceType.BROKER, "2", ("log.retention.ms", SET, "1")))[0] is ErrorCode.invalid_request
    assert (await error(ResourceType.BROKER, "1", ("num.partitions", SET, "3")))[1] == \
        "Cannot update these configs dynamically: [num.partitions]"
    assert (await error(ResourceType.GROUP, "g", ("consumer.heartbeat.interval.ms", SET, "99999")))[1] == \
        "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"
    assert (await error(ResourceType.TOPIC, "orders", ("retention.ms", SET, "5"), validate_only=True))[0] \
        is ErrorCode.none
    assert "retention.ms" not in dataplane.topics.get("orders").configs  # validate_only changed nothing


async def test_legacy_alter_configs_replaces_the_whole_set(dataplane):
    await dataplane.topics.create("orders", 1, configs={"retention.ms": "1000", "segment.ms": "5000"})
    result = await dataplane.config_changes.replace(ResourceType.TOPIC, "orders", [("max.message.bytes", "2048")],
                                                    False)
    assert result.error is ErrorCode.none
    assert dataplane.topics.get("orders").configs == {"max.message.bytes": "2048"}
    refused = await dataplane.config_changes.replace(ResourceType.TOPIC, "orders", [("retention.ms", None)], False)
    assert refused.error is ErrorCode.invalid_request
