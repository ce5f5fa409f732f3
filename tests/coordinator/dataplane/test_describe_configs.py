"""DescribeConfigs as kafka-configs.sh, AdminClient and librdkafka ask it."""
from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.dataplane.configs import ResourceType
from groupcoord.coordinator.dataplane.topic_configs import ConfigSource

from tests.coordinator.dataplane.conftest import Node


def by_name(result):
    return {c["name"]: c for c in result["configs"]}


async def test_topic_configs_show_overrides_and_defaults(dataplane):
    await dataplane.topics.create("orders", 1, 1, {"retention.ms": "1000"})
    response = dataplane.describe_configs.describe([(ResourceType.TOPIC, "orders", None)], include_synonyms=True)
    [result] = response["results"]
    assert result["error_code"] is ErrorCode.none
    configs = by_name(result)
    assert configs["retention.ms"]["value"] == "1000"
    assert configs["retention.ms"]["config_source"] == ConfigSource.DYNAMIC_TOPIC_CONFIG
    # as Kafka: log.retention.ms has no default of its own (log.retention.hours has), so no synonym for it
    assert [s["name"] for s in configs["retention.ms"]["synonyms"]] == ["retention.ms"]
    assert configs["cleanup.policy"]["value"] == "delete"
    assert configs["cleanup.policy"]["config_source"] == ConfigSource.DEFAULT_CONFIG
    assert configs["max.message.bytes"]["value"] == "1048588"


async def test_broker_settings_become_topic_defaults(tmp_path):
    node = Node(tmp_path, log_retention_ms=60_000)
    dataplane = await node.start()
    try:
        await dataplane.topics.create("orders", 1)
        [result] = dataplane.describe_configs.describe([(ResourceType.TOPIC, "orders", ["retention.ms"])],
                                                       include_synonyms=False)["results"]
        assert list(by_name(result)) == ["retention.ms"]
        entry = by_name(result)["retention.ms"]
        assert (entry["value"], entry["config_source"]) == ("60000", ConfigSource.STATIC_BROKER_CONFIG)
        assert dataplane.topics.get("orders").log_config.retention_ms == 60_000
    finally:
        await node.stop()


async def test_broker_configs(dataplane):
    response = dataplane.describe_configs.describe(
        [(ResourceType.BROKER, "1", None), (ResourceType.BROKER, "7", None)], include_synonyms=False)
    mine, other = response["results"]
    assert mine["error_code"] is ErrorCode.none
    configs = by_name(mine)
    assert configs["num.partitions"]["value"] == "1"
    assert configs["auto.create.topics.enable"]["value"] == "true"
    assert "log.cleanup.policy" in configs
    assert other["error_code"] is ErrorCode.invalid_request


async def test_unknown_topics(dataplane):
    response = dataplane.describe_configs.describe(
        [(ResourceType.TOPIC, "nope", None), (ResourceType.TOPIC, "bad name", None)], include_synonyms=False)
    assert [r["error_code"] for r in response["results"]] == [ErrorCode.unknown_topic_or_partition,
                                                             ErrorCode.invalid_topic_exception]
