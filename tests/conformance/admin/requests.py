"""Admin request builders at pinned versions: the highest both groupcoord and Kafka 4.3.1 serve (checked against
both brokers' ApiVersions by the suite): IncrementalAlterConfigs 1, AlterConfigs 2, DescribeConfigs 4,
DeleteRecords 2, DescribeLogDirs 4, DescribeTopicPartitions 0, DescribeProducers 0, DescribeClientQuotas 1,
AlterClientQuotas 1, ConsumerGroupHeartbeat 1."""

from __future__ import annotations

from datetime import timedelta
from enum import IntEnum
from types import ModuleType

from kio.index import load_payload_module
from kio.static.constants import EntityType


class AdminApi(IntEnum):
    DELETE_RECORDS = 21
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    INCREMENTAL_ALTER_CONFIGS = 44
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    DESCRIBE_PRODUCERS = 61
    CONSUMER_GROUP_HEARTBEAT = 68
    DESCRIBE_TOPIC_PARTITIONS = 75


VERSIONS: dict[AdminApi, int] = {
    AdminApi.DELETE_RECORDS: 2,
    AdminApi.DESCRIBE_CONFIGS: 4,
    AdminApi.ALTER_CONFIGS: 2,
    AdminApi.DESCRIBE_LOG_DIRS: 4,
    AdminApi.INCREMENTAL_ALTER_CONFIGS: 1,
    AdminApi.DESCRIBE_CLIENT_QUOTAS: 1,
    AdminApi.ALTER_CLIENT_QUOTAS: 1,
    AdminApi.DESCRIBE_PRODUCERS: 0,
    AdminApi.CONSUMER_GROUP_HEARTBEAT: 1,
    AdminApi.DESCRIBE_TOPIC_PARTITIONS: 0,
}

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2
REQUEST_TIMEOUT_MS = 30000


def schema(api: AdminApi) -> ModuleType:
    return load_payload_module(int(api), VERSIONS[api], EntityType.request)


def incremental_alter_configs(resources: list[tuple[int, str, list[tuple[str, int, str | None]]]],
                              validate_only: bool = False):
    m = schema(AdminApi.INCREMENTAL_ALTER_CONFIGS)
    return m.IncrementalAlterConfigsRequest(validate_only=validate_only, resources=tuple(
        m.AlterConfigsResource(resource_type=kind, resource_name=name, configs=tuple(
            m.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in configs))
        for kind, name, configs in resources))


def alter_configs(resources: list[tuple[int, str, dict[str, str | None]]], validate_only: bool = False):
    m = schema(AdminApi.ALTER_CONFIGS)
    return m.AlterConfigsRequest(validate_only=validate_only, resources=tuple(
        m.AlterConfigsResource(resource_type=kind, resource_name=name, configs=tuple(
            m.AlterableConfig(name=n, value=v) for n, v in configs.items()))
        for kind, name, configs in resources))


def describe_configs(resources: list[tuple[int, str, tuple[str, ...] | None]], synonyms: bool = False):
    m = schema(AdminApi.DESCRIBE_CONFIGS)
    return m.DescribeConfigsRequest(include_synonyms=synonyms, include_documentation=False, resources=tuple(
        m.DescribeConfigsResource(resource_type=kind, resource_name=name, configuration_keys=keys)
        for kind, name, keys in resources))


def delete_records(offsets: dict[tuple[str, int], int]):
    m = schema(AdminApi.DELETE_RECORDS)
    topics: dict[str, list] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(m.DeleteRecordsPartition(partition_index=partition, offset=offset))
    return m.DeleteRecordsRequest(timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS), topics=tuple(
        m.DeleteRecordsTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()))


def describe_log_dirs(topics: dict[str, tuple[int, ...]] | None):
    m = schema(AdminApi.DESCRIBE_LOG_DIRS)
    return m.DescribeLogDirsRequest(topics=None if topics is None else tuple(
        m.DescribableLogDirTopic(topic=t, partitions=ps) for t, ps in topics.items()))


def describe_topic_partitions(topics: tuple[str, ...], limit: int, cursor: tuple[str, int] | None = None):
    m = schema(AdminApi.DESCRIBE_TOPIC_PARTITIONS)
    return m.DescribeTopicPartitionsRequest(
        topics=tuple(m.TopicRequest(name=t) for t in topics), response_partition_limit=limit,
        cursor=None if cursor is None else m.Cursor(topic_name=cursor[0], partition_index=cursor[1]))


def describe_producers(partitions: dict[str, tuple[int, ...]]):
    m = schema(AdminApi.DESCRIBE_PRODUCERS)
    return m.DescribeProducersRequest(topics=tuple(
        m.TopicRequest(name=t, partition_indexes=ps) for t, ps in partitions.items()))


def alter_client_quotas(entries: list[tuple[dict[str, str | None], dict[str, float | None]]],
                        validate_only: bool = False):
    m = schema(AdminApi.ALTER_CLIENT_QUOTAS)
    return m.AlterClientQuotasRequest(validate_only=validate_only, entries=tuple(
        m.EntryData(entity=tuple(m.EntityData(entity_type=k, entity_name=v) for k, v in entity.items()),
                    ops=tuple(m.OpData(key=k, value=0.0 if v is None else float(v), remove=v is None)
                              for k, v in ops.items()))
        for entity, ops in entries))


def describe_client_quotas(components: list[tuple[str, int, str | None]], strict: bool = False):
    m = schema(AdminApi.DESCRIBE_CLIENT_QUOTAS)
    return m.DescribeClientQuotasRequest(strict=strict, components=tuple(
        m.ComponentData(entity_type=t, match_type=mt, match=n) for t, mt, n in components))
