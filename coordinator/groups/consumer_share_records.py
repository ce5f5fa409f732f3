"""The consumer-group (KIP-848, record types 3-8) and share-group (KIP-932, types 10-15) records of
``__consumer_offsets``: their classes and their schemas, which offsets_records' generic reader and writer walk.

Kept apart from offsets_records, and imported on first use, so that a broker whose groups are all classic does not
build these 31 frozen dataclasses at start-up (a dataclass costs the compilation of its generated methods: these
were ~8 % of the daemon's exec-to-listening time). Every name here is also reached as an attribute of
offsets_records (``offsets_records.ShareGroupMetadataKey``, ``from ...offsets_records import TopicPartitions``),
which imports this module on the first such access, or when it reads a key of a record type it does not know yet.
Importing this module adds its record types to record_schemas' tables, which offsets_records reads.
"""

from __future__ import annotations

import uuid

from groupcoord.coordinator.groups.record_schemas import RecordType, Schema, add_record_types, field as _f
from groupcoord.protocol.frozen import frozen_dataclass

__all__ = [
    "ConsumerGroupMetadataKey",
    "ConsumerGroupMetadataValue",
    "PartitionRacks",
    "TopicMetadata",
    "ConsumerGroupPartitionMetadataKey",
    "ConsumerGroupPartitionMetadataValue",
    "ClassicProtocol",
    "ClassicMemberMetadata",
    "ConsumerGroupMemberMetadataKey",
    "ConsumerGroupMemberMetadataValue",
    "ConsumerGroupTargetAssignmentMetadataKey",
    "ConsumerGroupTargetAssignmentMetadataValue",
    "TopicPartitions",
    "ConsumerGroupTargetAssignmentMemberKey",
    "ConsumerGroupTargetAssignmentMemberValue",
    "ConsumerGroupCurrentMemberAssignmentKey",
    "ConsumerGroupCurrentMemberAssignmentValue",
    "ShareGroupMemberMetadataKey",
    "ShareGroupMemberMetadataValue",
    "ShareGroupMetadataKey",
    "ShareGroupMetadataValue",
    "ShareGroupTargetAssignmentMetadataKey",
    "ShareGroupTargetAssignmentMetadataValue",
    "ShareGroupTargetAssignmentMemberKey",
    "ShareGroupTargetAssignmentMemberValue",
    "ShareGroupCurrentMemberAssignmentKey",
    "ShareGroupCurrentMemberAssignmentValue",
    "TopicPartitionsInfo",
    "TopicInfo",
    "ShareGroupStatePartitionMetadataKey",
    "ShareGroupStatePartitionMetadataValue",
    "CONSUMER_KEYS",
    "SHARE_KEYS",
]


# --- consumer groups (KIP-848), record types 3-8


@frozen_dataclass
class ConsumerGroupMetadataKey:
    group_id: str


@frozen_dataclass
class ConsumerGroupMetadataValue:
    epoch: int


@frozen_dataclass
class PartitionRacks:
    partition: int
    racks: tuple[str, ...] = ()


@frozen_dataclass
class TopicMetadata:
    topic_id: uuid.UUID
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionRacks, ...] = ()


@frozen_dataclass
class ConsumerGroupPartitionMetadataKey:
    group_id: str


@frozen_dataclass
class ConsumerGroupPartitionMetadataValue:
    topics: tuple[TopicMetadata, ...] = ()


@frozen_dataclass
class ClassicProtocol:
    name: str
    metadata: bytes


@frozen_dataclass
class ClassicMemberMetadata:
    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...] = ()


@frozen_dataclass
class ConsumerGroupMemberMetadataKey:
    group_id: str
    member_id: str


@frozen_dataclass
class ConsumerGroupMemberMetadataValue:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    classic_member_metadata: ClassicMemberMetadata | None = None


@frozen_dataclass
class ConsumerGroupTargetAssignmentMetadataKey:
    group_id: str


@frozen_dataclass
class ConsumerGroupTargetAssignmentMetadataValue:
    assignment_epoch: int
    # Kafka 4.3's tagged field 0: when the target was computed, which group.consumer.assignment.interval.ms
    # counts from (0: never, or written before 4.3 — the next assignment may be computed at once).
    assignment_timestamp: int = 0


@frozen_dataclass
class TopicPartitions:
    topic_id: uuid.UUID
    partitions: tuple[int, ...] = ()


@frozen_dataclass
class ConsumerGroupTargetAssignmentMemberKey:
    group_id: str
    member_id: str


@frozen_dataclass
class ConsumerGroupTargetAssignmentMemberValue:
    topic_partitions: tuple[TopicPartitions, ...] = ()


@frozen_dataclass
class ConsumerGroupCurrentMemberAssignmentKey:
    group_id: str
    member_id: str


@frozen_dataclass
class ConsumerGroupCurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...] = ()
    partitions_pending_revocation: tuple[TopicPartitions, ...] = ()


# --- share groups (KIP-932), as Kafka 4.3.1 writes them (record types 10-15; type 9, the pre-4.1
# ShareGroupPartitionMetadata, is no longer written and is skipped as unknown)


@frozen_dataclass
class ShareGroupMemberMetadataKey:
    group_id: str
    member_id: str


@frozen_dataclass
class ShareGroupMemberMetadataValue:
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...] = ()


@frozen_dataclass
class ShareGroupMetadataKey:
    group_id: str


@frozen_dataclass
class ShareGroupMetadataValue:
    epoch: int
    metadata_hash: int = 0


@frozen_dataclass
class ShareGroupTargetAssignmentMetadataKey:
    group_id: str


@frozen_dataclass
class ShareGroupTargetAssignmentMetadataValue:
    assignment_epoch: int
    assignment_timestamp: int = 0  # tagged field 0


@frozen_dataclass
class ShareGroupTargetAssignmentMemberKey:
    group_id: str
    member_id: str


@frozen_dataclass
class ShareGroupTargetAssignmentMemberValue:
    topic_partitions: tuple[TopicPartitions, ...] = ()


@frozen_dataclass
class ShareGroupCurrentMemberAssignmentKey:
    group_id: str
    member_id: str


@frozen_dataclass
class ShareGroupCurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...] = ()


@frozen_dataclass
class TopicPartitionsInfo:
    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...] = ()


@frozen_dataclass
class TopicInfo:
    topic_id: uuid.UUID
    topic_name: str


@frozen_dataclass
class ShareGroupStatePartitionMetadataKey:
    group_id: str


@frozen_dataclass
class ShareGroupStatePartitionMetadataValue:
    initializing_topics: tuple[TopicPartitionsInfo, ...] = ()
    initialized_topics: tuple[TopicPartitionsInfo, ...] = ()
    deleting_topics: tuple[TopicInfo, ...] = ()


CONSUMER_KEYS = (
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupCurrentMemberAssignmentKey,
)
SHARE_KEYS = (
    ShareGroupMetadataKey,
    ShareGroupMemberMetadataKey,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupStatePartitionMetadataKey,
)

_SCHEMAS: dict[type, Schema] = {
    ConsumerGroupMetadataKey: ((_f("group_id", "string"),), None),
    ConsumerGroupMetadataValue: ((_f("epoch", "int32"),), 0),
    ConsumerGroupPartitionMetadataKey: ((_f("group_id", "string"),), None),
    PartitionRacks: ((_f("partition", "int32"), _f("racks", ("array", "string"))), 0),
    TopicMetadata: (
        (
            _f("topic_id", "uuid"),
            _f("topic_name", "string"),
            _f("num_partitions", "int32"),
            _f("partition_metadata", ("array", PartitionRacks)),
        ),
        0,
    ),
    ConsumerGroupPartitionMetadataValue: ((_f("topics", ("array", TopicMetadata)),), 0),
    ConsumerGroupMemberMetadataKey: ((_f("group_id", "string"), _f("member_id", "string")), None),
    ClassicProtocol: ((_f("name", "string"), _f("metadata", "bytes")), 0),
    ClassicMemberMetadata: (
        (_f("session_timeout_ms", "int32"), _f("supported_protocols", ("array", ClassicProtocol))),
        0,
    ),
    ConsumerGroupMemberMetadataValue: (
        (
            _f("instance_id", "string", nullable=True),
            _f("rack_id", "string", nullable=True),
            _f("client_id", "string"),
            _f("client_host", "string"),
            _f("subscribed_topic_names", ("array", "string")),
            _f("subscribed_topic_regex", "string", nullable=True),
            _f("rebalance_timeout_ms", "int32", default=-1),
            _f("server_assignor", "string", nullable=True),
            _f("classic_member_metadata", ClassicMemberMetadata, nullable=True, default=None, tag=0),
        ),
        0,
    ),
    ConsumerGroupTargetAssignmentMetadataKey: ((_f("group_id", "string"),), None),
    ConsumerGroupTargetAssignmentMetadataValue: (
        (_f("assignment_epoch", "int32"), _f("assignment_timestamp", "int64", default=0, tag=0)), 0),
    TopicPartitions: ((_f("topic_id", "uuid"), _f("partitions", ("array", "int32"))), 0),
    ConsumerGroupTargetAssignmentMemberKey: ((_f("group_id", "string"), _f("member_id", "string")), None),
    ConsumerGroupTargetAssignmentMemberValue: ((_f("topic_partitions", ("array", TopicPartitions)),), 0),
    ConsumerGroupCurrentMemberAssignmentKey: ((_f("group_id", "string"), _f("member_id", "string")), None),
    ConsumerGroupCurrentMemberAssignmentValue: (
        (
            _f("member_epoch", "int32"),
            _f("previous_member_epoch", "int32"),
            _f("state", "int8"),
            _f("assigned_partitions", ("array", TopicPartitions)),
            _f("partitions_pending_revocation", ("array", TopicPartitions)),
        ),
        0,
    ),
    ShareGroupMemberMetadataKey: ((_f("group_id", "string"), _f("member_id", "string")), None),
    ShareGroupMemberMetadataValue: (
        (
            _f("rack_id", "string", nullable=True),
            _f("client_id", "string"),
            _f("client_host", "string"),
            _f("subscribed_topic_names", ("array", "string")),
        ),
        0,
    ),
    ShareGroupMetadataKey: ((_f("group_id", "string"),), None),
    ShareGroupMetadataValue: ((_f("epoch", "int32"), _f("metadata_hash", "int64")), 0),
    ShareGroupTargetAssignmentMetadataKey: ((_f("group_id", "string"),), None),
    ShareGroupTargetAssignmentMetadataValue: (
        (_f("assignment_epoch", "int32"), _f("assignment_timestamp", "int64", default=0, tag=0)),
        0,
    ),
    ShareGroupTargetAssignmentMemberKey: ((_f("group_id", "string"), _f("member_id", "string")), None),
    ShareGroupTargetAssignmentMemberValue: ((_f("topic_partitions", ("array", TopicPartitions)),), 0),
    ShareGroupCurrentMemberAssignmentKey: ((_f("group_id", "string"), _f("member_id", "string")), None),
    ShareGroupCurrentMemberAssignmentValue: (
        (
            _f("member_epoch", "int32"),
            _f("previous_member_epoch", "int32"),
            _f("state", "int8"),
            _f("assigned_partitions", ("array", TopicPartitions)),
        ),
        0,
    ),
    TopicPartitionsInfo: ((_f("topic_id", "uuid"), _f("topic_name", "string"), _f("partitions", ("array", "int32"))), 0),
    TopicInfo: ((_f("topic_id", "uuid"), _f("topic_name", "string")), 0),
    ShareGroupStatePartitionMetadataKey: ((_f("group_id", "string"),), None),
    ShareGroupStatePartitionMetadataValue: (
        (
            _f("initializing_topics", ("array", TopicPartitionsInfo)),
            _f("initialized_topics", ("array", TopicPartitionsInfo)),
            _f("deleting_topics", ("array", TopicInfo)),
        ),
        0,
    ),
}

_RECORD_TYPES: dict[int, RecordType] = {
    3: (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue, (0, 0), 0),
    4: (ConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataValue, (0, 0), 0),
    5: (ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue, (0, 0), 0),
    6: (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue, (0, 0), 0),
    7: (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue, (0, 0), 0),
    8: (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue, (0, 0), 0),
    10: (ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue, (0, 0), 0),
    11: (ShareGroupMetadataKey, ShareGroupMetadataValue, (0, 0), 0),
    12: (ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue, (0, 0), 0),
    13: (ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue, (0, 0), 0),
    14: (ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue, (0, 0), 0),
    15: (ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue, (0, 0), 0),
}

add_record_types(_SCHEMAS, _RECORD_TYPES)
