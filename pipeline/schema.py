"""The columns of the `consumer_offsets` data source, defined once for Arrow and Spark.

Every decoded `__consumer_offsets` record, and every damaged stretch of a segment, becomes one row.
The Arrow schema is the source of truth: the worker builds Arrow record batches against it and the
Spark schema is derived from it, so the two can never disagree about a column's name or type.
"""

from __future__ import annotations

import re
from enum import Enum

import pyarrow as pa


class RecordKind(str, Enum):
    """What a row is. Tombstones get their own kind because they delete rather than describe."""

    OFFSET_COMMIT = "offset_commit"
    OFFSET_COMMIT_TOMBSTONE = "offset_commit_tombstone"
    GROUP_METADATA = "group_metadata"
    GROUP_METADATA_TOMBSTONE = "group_metadata_tombstone"
    CONSUMER_GROUP_METADATA = "consumer_group_metadata"
    CONSUMER_GROUP_METADATA_TOMBSTONE = "consumer_group_metadata_tombstone"
    CONSUMER_GROUP_PARTITION_METADATA = "consumer_group_partition_metadata"
    CONSUMER_GROUP_PARTITION_METADATA_TOMBSTONE = "consumer_group_partition_metadata_tombstone"
    CONSUMER_GROUP_MEMBER_METADATA = "consumer_group_member_metadata"
    CONSUMER_GROUP_MEMBER_METADATA_TOMBSTONE = "consumer_group_member_metadata_tombstone"
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = "consumer_group_target_assignment_metadata"
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_TOMBSTONE = "consumer_group_target_assignment_metadata_tombstone"
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = "consumer_group_target_assignment_member"
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_TOMBSTONE = "consumer_group_target_assignment_member_tombstone"
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = "consumer_group_current_member_assignment"
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_TOMBSTONE = "consumer_group_current_member_assignment_tombstone"
    # KIP-932 share groups (record types 10-15, as Kafka 4.3 writes them).
    SHARE_GROUP_METADATA = "share_group_metadata"
    SHARE_GROUP_METADATA_TOMBSTONE = "share_group_metadata_tombstone"
    SHARE_GROUP_MEMBER_METADATA = "share_group_member_metadata"
    SHARE_GROUP_MEMBER_METADATA_TOMBSTONE = "share_group_member_metadata_tombstone"
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = "share_group_target_assignment_metadata"
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_TOMBSTONE = "share_group_target_assignment_metadata_tombstone"
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = "share_group_target_assignment_member"
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_TOMBSTONE = "share_group_target_assignment_member_tombstone"
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = "share_group_current_member_assignment"
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_TOMBSTONE = "share_group_current_member_assignment_tombstone"
    SHARE_GROUP_STATE_PARTITION_METADATA = "share_group_state_partition_metadata"
    SHARE_GROUP_STATE_PARTITION_METADATA_TOMBSTONE = "share_group_state_partition_metadata_tombstone"
    # A record type this reader does not know: Kafka's loader skips these with a warning.
    UNKNOWN = "unknown"
    # A record of a known type whose key or value does not decode: Kafka's loader would fail.
    MALFORMED = "malformed"
    # Transaction markers decide whether transactional offset commits take effect.
    TXN_COMMIT = "txn_commit"
    TXN_ABORT = "txn_abort"
    CONTROL = "control"
    # Damage: a batch that fails its checks, and an incomplete write at the end of a segment.
    CORRUPT = "corrupt"
    TORN_TAIL = "torn_tail"

    @classmethod
    def for_record_class(cls, class_name: str, *, tombstone: bool) -> "RecordKind":
        """Map a storage key class (`ConsumerGroupMetadataKey`) to its kind, by Kafka's schema names."""
        stem = class_name[:-3] if class_name.endswith("Key") else class_name
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()
        return cls(snake + "_tombstone" if tombstone else snake)


DAMAGE_KINDS = (RecordKind.CORRUPT, RecordKind.TORN_TAIL)

ASSIGNED_PARTITION = pa.struct([("topic", pa.string()), ("partition", pa.int32())])

MEMBER = pa.struct(
    [
        ("member_id", pa.string()),
        ("instance_id", pa.string()),
        ("client_id", pa.string()),
        ("client_host", pa.string()),
        ("session_timeout_ms", pa.int32()),
        ("rebalance_timeout_ms", pa.int32()),
        ("subscribed_topics", pa.list_(pa.string())),
        ("assigned_partitions", pa.list_(ASSIGNED_PARTITION)),
        ("protocol_error", pa.string()),
    ]
)

# The row is built section by section (pipeline/record_rows.py fills each section as one tuple),
# so the sections below are the single definition of the column order.
RECORD_SECTION = [
    ("offsets_partition", pa.int32()),
    ("segment", pa.string()),
    ("batch_position", pa.int64()),
    ("log_offset", pa.int64()),
    ("timestamp", pa.int64()),
    ("batch_timestamp", pa.int64()),
    ("kind", pa.string()),
    ("producer_id", pa.int64()),
    ("is_transactional", pa.bool_()),
    ("record_bytes", pa.int32()),
]
OFFSET_KEY_SECTION = [
    ("group", pa.string()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
]
OFFSET_VALUE_SECTION = [
    ("committed_offset", pa.int64()),
    ("leader_epoch", pa.int32()),
    ("metadata", pa.string()),
    ("commit_timestamp", pa.int64()),
    ("expire_timestamp", pa.int64()),
]
GROUP_SECTION = [
    ("generation", pa.int32()),
    ("protocol_type", pa.string()),
    ("protocol_name", pa.string()),
    ("leader", pa.string()),
    ("current_state_timestamp", pa.int64()),
    ("member_count", pa.int32()),
    ("members", pa.list_(MEMBER)),
]
EXTRA_SECTION = [
    ("member_id", pa.string()),
    ("detail", pa.string()),
    ("error", pa.string()),
]

ARROW_SCHEMA = pa.schema(RECORD_SECTION + OFFSET_KEY_SECTION + OFFSET_VALUE_SECTION + GROUP_SECTION + EXTRA_SECTION)
COLUMN_NAMES = tuple(ARROW_SCHEMA.names)


def spark_schema():
    """The Spark StructType matching ARROW_SCHEMA (imported lazily: workers only need Arrow)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(ARROW_SCHEMA)
