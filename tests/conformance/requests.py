"""Request builders at the fixed API versions the scenarios speak.

Versions are pinned, not negotiated, so both brokers are asked exactly the same bytes and a transcript
difference can only come from the broker. The defaults are what current Java clients send; scenarios that
cover an older, non-flexible version pass it explicitly.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from datetime import timedelta
from enum import IntEnum
from types import ModuleType
from typing import Any

from kio.index import load_payload_module
from kio.schema.consumer_protocol_assignment.v0 import data as assignment_v0
from kio.schema.consumer_protocol_subscription.v0 import data as subscription_v0
from kio.serial import entity_writer
from kio.static.constants import EntityType


class Api(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    OFFSET_DELETE = 47
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_GROUP_DESCRIBE = 77


# The versions scenarios pin; the data-plane APIs are listed in Api only for the served-API guard.
DEFAULT_VERSIONS: dict[Api, int] = {
    Api.OFFSET_COMMIT: 9,
    Api.OFFSET_FETCH: 8,
    Api.FIND_COORDINATOR: 4,
    Api.JOIN_GROUP: 9,
    Api.HEARTBEAT: 4,
    Api.LEAVE_GROUP: 5,
    Api.SYNC_GROUP: 5,
    Api.DESCRIBE_GROUPS: 5,
    Api.LIST_GROUPS: 4,
    Api.CREATE_TOPICS: 7,
    Api.DELETE_TOPICS: 5,
    Api.DELETE_GROUPS: 2,
    Api.INCREMENTAL_ALTER_CONFIGS: 1,
    Api.OFFSET_DELETE: 0,
    Api.METADATA: 12,
    Api.CONSUMER_GROUP_HEARTBEAT: 1,
    Api.CONSUMER_GROUP_DESCRIBE: 1,
    Api.SHARE_GROUP_HEARTBEAT: 1,
    Api.SHARE_GROUP_DESCRIBE: 1,
}

COORDINATOR_KEY_GROUP = 0
SESSION_TIMEOUT_MS = 6000  # group.min.session.timeout.ms: the smallest a broker accepts
REBALANCE_TIMEOUT_MS = 6000


def schema(api: Api, version: int | None = None) -> ModuleType:
    return load_payload_module(int(api), DEFAULT_VERSIONS[api] if version is None else version, EntityType.request)


def build(cls: type, **values: Any) -> Any:
    """Builds `cls` from the values its version has: a field added in a later version (an instance id, a
    reason) is left out of older requests, as a client speaking that version would."""
    known = {f.name for f in dataclass_fields(cls)}
    return cls(**{name: value for name, value in values.items() if name in known})


@dataclass(frozen=True)
class Protocol:
    """One entry of a JoinGroup protocol list: an assignor name and the consumer's subscription."""

    name: str
    topics: tuple[str, ...] = ()

    def metadata(self) -> bytes:
        return versioned(subscription_v0.ConsumerProtocolSubscription(topics=self.topics))


def versioned(entity: object) -> bytes:
    """Consumer-protocol payloads are an int16 version followed by the body of that version."""
    body = io.BytesIO()
    body.write(struct.pack(">h", type(entity).__version__))
    entity_writer(type(entity))(body, entity)
    return body.getvalue()


def assignment(partitions: dict[str, tuple[int, ...]]) -> bytes:
    return versioned(assignment_v0.ConsumerProtocolAssignment(assigned_partitions=tuple(
        assignment_v0.TopicPartition(topic=topic, partitions=parts) for topic, parts in partitions.items())))


def find_coordinator(group_id: str):
    m = schema(Api.FIND_COORDINATOR)
    return m.FindCoordinatorRequest(key_type=COORDINATOR_KEY_GROUP, coordinator_keys=(group_id,))


def join_group(group_id: str, member_id: str, protocols: tuple[Protocol, ...], *, instance_id: str | None = None,
               protocol_type: str = "consumer", session_timeout_ms: int = SESSION_TIMEOUT_MS,
               rebalance_timeout_ms: int = REBALANCE_TIMEOUT_MS, version: int | None = None):
    m = schema(Api.JOIN_GROUP, version)
    fields = dict(group_id=group_id, session_timeout=timedelta(milliseconds=session_timeout_ms),
                  rebalance_timeout=timedelta(milliseconds=rebalance_timeout_ms), member_id=member_id,
                  group_instance_id=instance_id, protocol_type=protocol_type,
                  protocols=tuple(m.JoinGroupRequestProtocol(name=p.name, metadata=p.metadata()) for p in protocols))
    return build(m.JoinGroupRequest, **fields, reason=None)


def sync_group(group_id: str, generation: int, member_id: str, assignments: dict[str, bytes], *,
               instance_id: str | None = None, protocol_type: str | None = "consumer",
               protocol_name: str | None = None):
    m = schema(Api.SYNC_GROUP)
    return m.SyncGroupRequest(
        group_id=group_id, generation_id=generation, member_id=member_id, group_instance_id=instance_id,
        protocol_type=protocol_type, protocol_name=protocol_name,
        assignments=tuple(m.SyncGroupRequestAssignment(member_id=k, assignment=v) for k, v in assignments.items()))


def heartbeat(group_id: str, generation: int, member_id: str, instance_id: str | None = None):
    m = schema(Api.HEARTBEAT)
    return m.HeartbeatRequest(group_id=group_id, generation_id=generation, member_id=member_id,
                              group_instance_id=instance_id)


def leave_group(group_id: str, members: tuple[tuple[str, str | None], ...], version: int | None = None):
    m = schema(Api.LEAVE_GROUP, version)
    identities = tuple(build(m.MemberIdentity, member_id=member_id, group_instance_id=instance_id, reason=None)
                       for member_id, instance_id in members)
    return m.LeaveGroupRequest(group_id=group_id, members=identities)


def offset_commit(group_id: str, generation: int, member_id: str, offsets: dict[tuple[str, int], int], *,
                  instance_id: str | None = None, metadata: str | None = ""):
    m = schema(Api.OFFSET_COMMIT)
    topics: dict[str, list] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(m.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_leader_epoch=-1,
            committed_metadata=metadata))
    return m.OffsetCommitRequest(
        group_id=group_id, generation_id_or_member_epoch=generation, member_id=member_id,
        group_instance_id=instance_id,
        topics=tuple(m.OffsetCommitRequestTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()))


def offset_fetch(group_id: str, partitions: dict[str, tuple[int, ...]] | None, require_stable: bool = False, *,
                 member_id: str | None = None, member_epoch: int = -1, version: int | None = None):
    """partitions=None asks for every committed offset of the group; v9 may name a KIP-848 member."""
    m = schema(Api.OFFSET_FETCH, version)
    topics = None if partitions is None else tuple(
        m.OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in partitions.items())
    group = build(m.OffsetFetchRequestGroup, group_id=group_id, topics=topics, member_id=member_id,
                  member_epoch=member_epoch)
    return m.OffsetFetchRequest(groups=(group,), require_stable=require_stable)


def describe_groups(*group_ids: str):
    m = schema(Api.DESCRIBE_GROUPS)
    return m.DescribeGroupsRequest(groups=group_ids, include_authorized_operations=False)


def list_groups(states: tuple[str, ...] = (), types: tuple[str, ...] = (), version: int | None = None):
    return build(schema(Api.LIST_GROUPS, version).ListGroupsRequest, states_filter=states, types_filter=types)


def delete_groups(*group_ids: str):
    return schema(Api.DELETE_GROUPS).DeleteGroupsRequest(groups_names=group_ids)


def offset_delete(group_id: str, partitions: dict[str, tuple[int, ...]]):
    m = schema(Api.OFFSET_DELETE)
    return m.OffsetDeleteRequest(group_id=group_id, topics=tuple(
        m.OffsetDeleteRequestTopic(name=t, partitions=tuple(m.OffsetDeleteRequestPartition(partition_index=p)
                                                            for p in ps)) for t, ps in partitions.items()))


def metadata(topic: str):
    m = schema(Api.METADATA)
    return m.MetadataRequest(topics=(m.MetadataRequestTopic(topic_id=None, name=topic),),
                             allow_auto_topic_creation=False, include_topic_authorized_operations=False)


def create_topic(name: str, partitions: int, timeout_ms: int = 30000):
    m = schema(Api.CREATE_TOPICS)
    return m.CreateTopicsRequest(
        topics=(m.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1, assignments=(),
                                 configs=()),),
        timeout=timedelta(milliseconds=timeout_ms), validate_only=False)


UNSET = object()


def consumer_group_heartbeat(group_id: str, member_id: str, epoch: int, *, topics=None, regex=None, owned=None,
                             rebalance_timeout_ms: int = -1, instance_id: str | None = None, assignor: str | None = None,
                             version: int | None = None):
    """KIP-848 ConsumerGroupHeartbeat; ``owned`` is a tuple of (topic id, partitions) or None (not sent)."""
    m = schema(Api.CONSUMER_GROUP_HEARTBEAT, version)
    return build(
        m.ConsumerGroupHeartbeatRequest, group_id=group_id, member_id=member_id, member_epoch=epoch,
        instance_id=instance_id, rack_id=None, rebalance_timeout=timedelta(milliseconds=rebalance_timeout_ms),
        subscribed_topic_names=topics, subscribed_topic_regex=regex, server_assignor=assignor,
        topic_partitions=None if owned is None else tuple(m.TopicPartitions(topic_id=t, partitions=tuple(ps)) for t, ps in owned))


def consumer_group_describe(*group_ids: str):
    return schema(Api.CONSUMER_GROUP_DESCRIBE).ConsumerGroupDescribeRequest(group_ids=group_ids,
                                                                            include_authorized_operations=False)


def share_group_heartbeat(group_id: str, member_id: str, epoch: int, *, topics=None, rack_id: str | None = None):
    """KIP-932 ShareGroupHeartbeat (v1: the member id is the client's own)."""
    m = schema(Api.SHARE_GROUP_HEARTBEAT)
    return build(m.ShareGroupHeartbeatRequest, group_id=group_id, member_id=member_id, member_epoch=epoch,
                 rack_id=rack_id, subscribed_topic_names=None if topics is None else tuple(topics))


def share_group_describe(*group_ids: str):
    return schema(Api.SHARE_GROUP_DESCRIBE).ShareGroupDescribeRequest(group_ids=group_ids,
                                                                      include_authorized_operations=False)


def delete_topics(*names: str, timeout_ms: int = 30000):
    return schema(Api.DELETE_TOPICS).DeleteTopicsRequest(topic_names=names, timeout=timedelta(milliseconds=timeout_ms))
