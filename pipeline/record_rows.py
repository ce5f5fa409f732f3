"""Turning `__consumer_offsets` records into rows of the data source's schema.

Decoding goes through the project's own codecs (`storage.offsets_records` for keys and values,
`protocol.consumer_protocol` for the members' subscription and assignment bytes) so the pipeline
reads exactly what the coordinator would replay. Offset-commit keys repeat endlessly (one per
group/topic/partition), so decoded keys are cached by their bytes: that is most of the speed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import uuid
from typing import Any

from protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    ConsumerProtocolError,
    decode_assignment,
    decode_subscription,
)
from protocol.record_batch import Record
from storage.offsets_records import (
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    UnknownKey,
    decode_key,
    decode_value,
)

from pipeline.schema import COLUMN_INDEX, COLUMN_NAMES, RecordKind
from pipeline.segment_scan import Damage, GoodBatch

_WIDTH = len(COLUMN_NAMES)
_COL = COLUMN_INDEX
_KEY_CACHE_LIMIT = 200_000
_CONTROL_TYPES = {0: RecordKind.TXN_ABORT, 1: RecordKind.TXN_COMMIT}
# KIP-848 records carry epochs rather than generations; they share the `generation` column.
_EPOCH_FIELDS = ("epoch", "assignment_epoch", "member_epoch")


@functools.lru_cache(maxsize=64)
def _kind_of(key_class: type, tombstone: bool) -> RecordKind:
    return RecordKind.for_record_class(key_class.__name__, tombstone=tombstone)


def _blank() -> list[Any]:
    return [None] * _WIDTH


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"cannot describe {type(value).__name__}")


def describe(value: Any) -> str:
    """A compact JSON rendering of a decoded record, for kinds without dedicated columns."""
    return json.dumps(dataclasses.asdict(value), default=_json_default, separators=(",", ":"), sort_keys=True)


def member_struct(member: MemberMetadata, protocol_type: str) -> dict[str, Any]:
    """One member of a classic group, its consumer-protocol bytes decoded when the group is a consumer group."""
    topics = assigned = error = None
    if protocol_type == CONSUMER_PROTOCOL_TYPE:
        try:
            topics = list(decode_subscription(member.subscription).topics)
            assigned = [
                {"topic": topic, "partition": p}
                for topic, parts in (decode_assignment(member.assignment).partitions if member.assignment else ())
                for p in parts
            ]
        except ConsumerProtocolError as exc:
            error = str(exc)
    return {
        "member_id": member.member_id,
        "instance_id": member.group_instance_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "session_timeout_ms": member.session_timeout,
        "rebalance_timeout_ms": member.rebalance_timeout,
        "subscribed_topics": topics,
        "assigned_partitions": assigned,
        "protocol_error": error,
    }


class RowDecoder:
    """Decodes one segment's batches into row lists (column order of `pipeline.schema`)."""

    def __init__(self, offsets_partition: int, segment_name: str) -> None:
        self.offsets_partition = offsets_partition
        self.segment_name = segment_name
        self._keys: dict[bytes, Any] = {}

    def _decode_key(self, key: bytes) -> Any:
        cached = self._keys.get(key)
        if cached is None:
            if len(self._keys) >= _KEY_CACHE_LIMIT:
                self._keys.clear()
            cached = decode_key(key)
            self._keys[key] = cached
        return cached

    def _base_row(self, batch: GoodBatch, record: Record) -> list[Any]:
        header = batch.header
        row = _blank()
        row[_COL["offsets_partition"]] = self.offsets_partition
        row[_COL["segment"]] = self.segment_name
        row[_COL["batch_position"]] = batch.position
        row[_COL["log_offset"]] = record.offset
        # With LogAppendTime the broker's append time (maxTimestamp) is every record's timestamp.
        row[_COL["timestamp"]] = header.max_timestamp if header.timestamp_type == 1 else record.timestamp
        row[_COL["batch_timestamp"]] = header.max_timestamp
        row[_COL["producer_id"]] = header.producer_id
        row[_COL["is_transactional"]] = header.is_transactional
        row[_COL["record_bytes"]] = (len(record.key) if record.key else 0) + (len(record.value) if record.value else 0)
        return row

    def damage_row(self, damage: Damage) -> list[Any]:
        row = _blank()
        row[_COL["offsets_partition"]] = self.offsets_partition
        row[_COL["segment"]] = self.segment_name
        row[_COL["batch_position"]] = damage.position
        row[_COL["log_offset"]] = damage.base_offset
        row[_COL["kind"]] = damage.kind.value
        row[_COL["record_bytes"]] = damage.bytes_affected
        row[_COL["detail"]] = json.dumps(
            {"records_claimed": damage.records_claimed, "bytes_affected": damage.bytes_affected}
        )
        row[_COL["error"]] = damage.error
        return row

    def batch_rows(self, batch: GoodBatch) -> list[list[Any]]:
        if batch.header.is_control:
            return [self._control_row(batch, record) for record in batch.records]
        return [self._record_row(batch, record) for record in batch.records]

    def _control_row(self, batch: GoodBatch, record: Record) -> list[Any]:
        row = self._base_row(batch, record)
        key = record.key or b""
        control_type = int.from_bytes(key[2:4], "big", signed=True) if len(key) >= 4 else -1
        row[_COL["kind"]] = _CONTROL_TYPES.get(control_type, RecordKind.CONTROL).value
        row[_COL["detail"]] = json.dumps({"control_type": control_type})
        return row

    def _record_row(self, batch: GoodBatch, record: Record) -> list[Any]:
        row = self._base_row(batch, record)
        if record.key is None:
            row[_COL["kind"]] = RecordKind.MALFORMED.value
            row[_COL["error"]] = "record without a key in a compacted topic"
            return row
        try:
            key = self._decode_key(record.key)
            if isinstance(key, UnknownKey):
                row[_COL["kind"]] = RecordKind.UNKNOWN.value
                row[_COL["detail"]] = json.dumps({"record_type": key.record_type})
                return row
            value = decode_value(key, record.value)
        except Exception as exc:  # a known record type that does not decode is reported, never fatal
            row[_COL["kind"]] = RecordKind.MALFORMED.value
            row[_COL["error"]] = f"{type(exc).__name__}: {exc}"
            return row
        row[_COL["kind"]] = _kind_of(type(key), value is None).value
        if isinstance(key, OffsetCommitKey):
            self._fill_offset_commit(row, key, value)
        else:
            row[_COL["group"]] = getattr(key, "group", None) or getattr(key, "group_id", None)
            row[_COL["member_id"]] = getattr(key, "member_id", None)
            if isinstance(value, GroupMetadataValue):
                self._fill_group_metadata(row, value)
            elif value is not None:
                row[_COL["detail"]] = describe(value)
                row[_COL["generation"]] = next(
                    (getattr(value, name) for name in _EPOCH_FIELDS if getattr(value, name, None) is not None), None
                )
        return row

    @staticmethod
    def _fill_offset_commit(row: list[Any], key: OffsetCommitKey, value: OffsetCommitValue | None) -> None:
        row[_COL["group"]] = key.group
        row[_COL["topic"]] = key.topic
        row[_COL["partition"]] = key.partition
        if value is not None:
            row[_COL["committed_offset"]] = value.offset
            row[_COL["leader_epoch"]] = value.leader_epoch
            row[_COL["metadata"]] = value.metadata
            row[_COL["commit_timestamp"]] = value.commit_timestamp
            row[_COL["expire_timestamp"]] = value.expire_timestamp

    @staticmethod
    def _fill_group_metadata(row: list[Any], value: GroupMetadataValue) -> None:
        row[_COL["generation"]] = value.generation
        row[_COL["protocol_type"]] = value.protocol_type
        row[_COL["protocol_name"]] = value.protocol
        row[_COL["leader"]] = value.leader
        row[_COL["current_state_timestamp"]] = value.current_state_timestamp
        row[_COL["member_count"]] = len(value.members)
        row[_COL["members"]] = [member_struct(member, value.protocol_type) for member in value.members]
