"""Share-partition requests at pinned versions (the highest Kafka 4.3.1 serves): ShareGroupHeartbeat 1,
ShareFetch 2, ShareAcknowledge 2, DescribeShareGroupOffsets 1, AlterShareGroupOffsets 0,
DeleteShareGroupOffsets 0, IncrementalAlterConfigs 1 (group configs). Built as kio entities, as a client
library would send them."""

from __future__ import annotations

import uuid
from datetime import timedelta
from enum import IntEnum
from types import ModuleType

from kio.index import load_payload_module
from kio.static.constants import EntityType


class ShareApi(IntEnum):
    INCREMENTAL_ALTER_CONFIGS = 44
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_FETCH = 78
    SHARE_ACKNOWLEDGE = 79
    DESCRIBE_SHARE_GROUP_OFFSETS = 90
    ALTER_SHARE_GROUP_OFFSETS = 91
    DELETE_SHARE_GROUP_OFFSETS = 92


VERSIONS: dict[ShareApi, int] = {
    ShareApi.INCREMENTAL_ALTER_CONFIGS: 1,
    ShareApi.SHARE_GROUP_HEARTBEAT: 1,
    ShareApi.SHARE_FETCH: 2,
    ShareApi.SHARE_ACKNOWLEDGE: 2,
    ShareApi.DESCRIBE_SHARE_GROUP_OFFSETS: 1,
    ShareApi.ALTER_SHARE_GROUP_OFFSETS: 0,
    ShareApi.DELETE_SHARE_GROUP_OFFSETS: 0,
}

ACCEPT, RELEASE, REJECT, RENEW = 1, 2, 3, 4
GROUP_RESOURCE = 32
SET = 0

Acks = dict[int, list[tuple[int, int, tuple[int, ...]]]]  # partition -> [(first, last, types)]


def schema(api: ShareApi) -> ModuleType:
    return load_payload_module(int(api), VERSIONS[api], EntityType.request)


def heartbeat(group_id: str, member_id: str, epoch: int, topics: tuple[str, ...] | None):
    m = schema(ShareApi.SHARE_GROUP_HEARTBEAT)
    return m.ShareGroupHeartbeatRequest(group_id=group_id, member_id=member_id, member_epoch=epoch, rack_id=None,
                                        subscribed_topic_names=topics)


def _ack_batches(m: ModuleType, batches) -> tuple:
    return tuple(m.AcknowledgementBatch(first_offset=f, last_offset=l, acknowledge_types=tuple(types))
                 for f, l, types in batches)


def share_fetch(group_id: str, member_id: str, epoch: int, topic_id: uuid.UUID, partitions: list[int], acks: Acks,
                *, max_records: int = 500, max_wait_ms: int = 0, renew: bool = False, forget: list[int] = ()):
    m = schema(ShareApi.SHARE_FETCH)
    wanted = sorted(set(partitions) | set(acks))
    topics = (m.FetchTopic(topic_id=topic_id, partitions=tuple(
        m.FetchPartition(partition_index=p, acknowledgement_batches=_ack_batches(m, acks.get(p, ())))
        for p in wanted)),) if wanted else ()
    forgotten = (m.ForgottenTopic(topic_id=topic_id, partitions=tuple(forget)),) if forget else ()
    limits = 0 if renew else 1
    return m.ShareFetchRequest(group_id=group_id, member_id=member_id, share_session_epoch=epoch,
                               max_wait=timedelta(milliseconds=max_wait_ms if not renew else 0),
                               min_bytes=limits, max_bytes=(1 << 20) * limits, max_records=max_records * limits,
                               batch_size=max_records * limits, share_acquire_mode=0, is_renew_ack=renew,
                               topics=topics, forgotten_topics_data=forgotten)


def share_acknowledge(group_id: str, member_id: str, epoch: int, topic_id: uuid.UUID, acks: Acks, *,
                      renew: bool = False):
    m = schema(ShareApi.SHARE_ACKNOWLEDGE)
    return m.ShareAcknowledgeRequest(
        group_id=group_id, member_id=member_id, share_session_epoch=epoch, is_renew_ack=renew,
        topics=(m.AcknowledgeTopic(topic_id=topic_id, partitions=tuple(
            m.AcknowledgePartition(partition_index=p, acknowledgement_batches=_ack_batches(m, batches))
            for p, batches in sorted(acks.items()))),))


def describe_offsets(group_id: str, topic: str | None, partitions: list[int]):
    m = schema(ShareApi.DESCRIBE_SHARE_GROUP_OFFSETS)
    topics = None if topic is None else (m.DescribeShareGroupOffsetsRequestTopic(topic_name=topic,
                                                                                  partitions=tuple(partitions)),)
    return m.DescribeShareGroupOffsetsRequest(groups=(m.DescribeShareGroupOffsetsRequestGroup(
        group_id=group_id, topics=topics),))


def alter_offsets(group_id: str, topic: str, offsets: dict[int, int]):
    m = schema(ShareApi.ALTER_SHARE_GROUP_OFFSETS)
    return m.AlterShareGroupOffsetsRequest(group_id=group_id, topics=(m.AlterShareGroupOffsetsRequestTopic(
        topic_name=topic, partitions=tuple(m.AlterShareGroupOffsetsRequestPartition(partition_index=p, start_offset=o)
                                           for p, o in sorted(offsets.items()))),))


def delete_offsets(group_id: str, *topics: str):
    m = schema(ShareApi.DELETE_SHARE_GROUP_OFFSETS)
    return m.DeleteShareGroupOffsetsRequest(group_id=group_id, topics=tuple(
        m.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics))


def set_group_configs(group_id: str, configs: dict[str, str]):
    m = schema(ShareApi.INCREMENTAL_ALTER_CONFIGS)
    return m.IncrementalAlterConfigsRequest(validate_only=False, resources=(m.AlterConfigsResource(
        resource_type=GROUP_RESOURCE, resource_name=group_id, configs=tuple(
            m.AlterableConfig(name=k, config_operation=SET, value=v) for k, v in configs.items())),))
