"""Turning `__consumer_offsets` records into rows of the data source's schema.

Decoding goes through the project's own codecs (`coordinator.groups.offsets_records` for keys and values,
`protocol.consumer_protocol` for the members' subscription and assignment bytes) so the pipeline
reads exactly what the coordinator would replay. Offset-commit keys repeat endlessly (one per
group/topic/partition), so decoded keys are cached by their bytes; rows are assembled from
whole-section tuples because per-column assignment cost more than the decoding itself.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import uuid
from typing import Any

from groupcoord.protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    ConsumerProtocolError,
    decode_assignment,
    decode_subscription,
)
from groupcoord.protocol.memo import Memo
from groupcoord.protocol.record_batch import Record
from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    UnknownKey,
    decode_key,
    decode_value,
    offset_value_fields,
)

from groupcoord.pipeline.schema import (
    EXTRA_SECTION,
    GROUP_SECTION,
    OFFSET_KEY_SECTION,
    OFFSET_VALUE_SECTION,
    RecordKind,
)
from groupcoord.pipeline.segment_scan import Damage, GoodBatch

_KEY_CACHE_LIMIT = 200_000
_CONTROL_TYPES = {0: RecordKind.TXN_ABORT, 1: RecordKind.TXN_COMMIT}
# KIP-848 records carry epochs rather than generations; they share the `generation` column.
_EPOCH_FIELDS = ("epoch", "assignment_epoch", "member_epoch")
_LOG_APPEND_TIME = 1

_NO_OFFSET_KEY = (None,) * len(OFFSET_KEY_SECTION)
_NO_OFFSET_VALUE = (None,) * len(OFFSET_VALUE_SECTION)
_NO_GROUP = (None,) * len(GROUP_SECTION)
_NO_EXTRA = (None,) * len(EXTRA_SECTION)
_NOTHING_DECODED = _NO_OFFSET_KEY + _NO_OFFSET_VALUE + _NO_GROUP
_OFFSET_ROW_END = _NO_GROUP + _NO_EXTRA


@functools.lru_cache(maxsize=64)
def _kind_of(key_class: type, tombstone: bool) -> str:
    return RecordKind.for_record_class(key_class.__name__, tombstone=tombstone).value


_OFFSET_COMMIT_KIND = _kind_of(OffsetCommitKey, False)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"cannot describe {type(value).__name__}")


def describe(value: Any) -> str:
    """A compact JSON rendering of a decoded record, for kinds without dedicated columns."""
    return json.dumps(dataclasses.asdict(value), default=_json_default, separators=(",", ":"), sort_keys=True)


_PROTOCOL_CACHE_LIMIT = 50_000


def _decode_consumer_protocol(key: tuple[bytes, bytes | None]) -> tuple:
    """(subscribed topics, assigned (topic, partition) pairs, error) of one member's (subscription, assignment)
    bytes, as far as decoding gets: topics stay decoded when only the assignment is refused."""
    subscription, assignment = key
    topics = assigned = None
    try:
        topics = tuple(decode_subscription(subscription).topics)
        assigned = tuple((topic, p) for topic, parts in (decode_assignment(assignment).partitions
                                                         if assignment else ()) for p in parts)
        return topics, assigned, None
    except ConsumerProtocolError as exc:
        return topics, assigned, str(exc)


_consumer_protocol = Memo(_decode_consumer_protocol, _PROTOCOL_CACHE_LIMIT)
"""A member's bytes repeat from one generation's GroupMetadata record to the next (the same subscription,
mostly the same assignment), and decoding them through kio's readers is most of the cost of a group record;
so each distinct pair is decoded once."""


def member_struct(member: MemberMetadata, protocol_type: str) -> dict[str, Any]:
    """One member of a classic group, its consumer-protocol bytes decoded when the group is a consumer group."""
    topics = assigned = error = None
    if protocol_type == CONSUMER_PROTOCOL_TYPE:
        subscribed, pairs, error = _consumer_protocol[member.subscription, member.assignment]
        if subscribed is not None:
            topics = list(subscribed)
        if pairs is not None:
            assigned = [{"topic": topic, "partition": p} for topic, p in pairs]
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


def _group_section(value: GroupMetadataValue) -> tuple:
    return (
        value.generation,
        value.protocol_type,
        value.protocol,
        value.leader,
        value.current_state_timestamp,
        len(value.members),
        [member_struct(member, value.protocol_type) for member in value.members],
    )


class RowDecoder:
    """Decodes one segment's batches into row tuples, section by section in `pipeline.schema` order."""

    def __init__(self, offsets_partition: int, segment_name: str) -> None:
        self.offsets_partition = offsets_partition
        self.segment_name = segment_name
        self._keys: dict[bytes, Any] = {}
        self._offset_keys: dict[bytes, tuple] = {}

    def _decode_key(self, key: bytes) -> Any:
        cached = self._keys.get(key)
        if cached is None:
            if len(self._keys) >= _KEY_CACHE_LIMIT:
                self._keys.clear()
            cached = decode_key(key)
            self._keys[key] = cached
        return cached

    def damage_row(self, damage: Damage) -> tuple:
        record = (self.offsets_partition, self.segment_name, damage.position, damage.base_offset, None, None,
                  damage.kind.value, None, None, damage.bytes_affected)
        detail = json.dumps({"records_claimed": damage.records_claimed, "bytes_affected": damage.bytes_affected})
        return record + _NOTHING_DECODED + (None, detail, damage.error)

    def _offset_key_section(self, key: bytes) -> tuple | None:
        """An offset-commit key's columns, decoded once per distinct key (keys repeat endlessly); None
        for any other key."""
        section = self._offset_keys.get(key)
        if section is None:
            if len(self._offset_keys) >= _KEY_CACHE_LIMIT:
                self._offset_keys.clear()
            try:
                decoded = self._decode_key(key)
            except Exception:  # a key that does not decode: `_record_row` reports it as malformed, with why
                decoded = None
            section = (decoded.group, decoded.topic, decoded.partition) if type(decoded) is OffsetCommitKey else ()
            self._offset_keys[key] = section
        return section or None

    def batch_rows(self, batch: GoodBatch) -> list[tuple]:
        header = batch.header
        # With LogAppendTime the broker's append time (maxTimestamp) is every record's timestamp.
        append_time = header.max_timestamp if header.timestamp_type == _LOG_APPEND_TIME else None
        context = (self.offsets_partition, self.segment_name, batch.position)
        max_timestamp = header.max_timestamp
        producer_id, transactional = header.producer_id, header.is_transactional
        if header.is_control:
            return [self.control_row(context, record, append_time, max_timestamp, producer_id, transactional)
                    for record in batch.records]
        return [self.record_row(context, record, append_time, max_timestamp, producer_id, transactional)
                for record in batch.records]

    def record_row(self, context: tuple, record: Record, append_time: int | None, max_timestamp: int,
                   producer_id: int, transactional: bool) -> tuple:
        """The row of one record of a data batch; `context` is (offsets partition, segment, batch position)."""
        key, value = record.key, record.value
        timestamp = record.timestamp if append_time is None else append_time
        # The commonest record by far, a live offset commit of value v0-v3, straight from its bytes
        # (the same readers as the coordinator's replay, without building its objects).
        if key is not None and value is not None:
            offset_key = self._offset_key_section(key)
            if offset_key is not None:
                fields = offset_value_fields(value)
                if fields is not None:
                    return (*context, record.offset, timestamp, max_timestamp, _OFFSET_COMMIT_KIND, producer_id,
                            transactional, len(key) + len(value), *offset_key, *fields, *_OFFSET_ROW_END)
        size = (len(key) if key else 0) + (len(value) if value else 0)
        kind, decoded = self._record_row(record)
        return (*context, record.offset, timestamp, max_timestamp, kind, producer_id, transactional, size, *decoded)

    def control_row(self, context: tuple, record: Record, append_time: int | None, max_timestamp: int,
                    producer_id: int, transactional: bool) -> tuple:
        """The row of one record of a control batch (a transaction marker)."""
        key, value = record.key, record.value
        timestamp = record.timestamp if append_time is None else append_time
        size = (len(key) if key else 0) + (len(value) if value else 0)
        kind, decoded = self._control_row(record)
        return (*context, record.offset, timestamp, max_timestamp, kind, producer_id, transactional, size, *decoded)

    @staticmethod
    def _control_row(record: Record) -> tuple[str, tuple]:
        key = record.key or b""
        control_type = int.from_bytes(key[2:4], "big", signed=True) if len(key) >= 4 else -1
        kind = _CONTROL_TYPES.get(control_type, RecordKind.CONTROL).value
        return kind, _NOTHING_DECODED + (None, json.dumps({"control_type": control_type}), None)

    def _record_row(self, record: Record) -> tuple[str, tuple]:
        if record.key is None:
            return RecordKind.MALFORMED.value, _NOTHING_DECODED + (None, None, "record without a key in a compacted topic")
        try:
            key = self._decode_key(record.key)
            if isinstance(key, UnknownKey):
                return RecordKind.UNKNOWN.value, _NOTHING_DECODED + (
                    None, json.dumps({"record_type": key.record_type}), None)
            value = decode_value(key, record.value)
        except Exception as exc:  # a known record type that does not decode is reported, never fatal
            return RecordKind.MALFORMED.value, _NOTHING_DECODED + (None, None, f"{type(exc).__name__}: {exc}")
        kind = _kind_of(type(key), value is None)
        if isinstance(key, OffsetCommitKey):
            offset_key = (key.group, key.topic, key.partition)
            if value is None:
                return kind, offset_key + _NO_OFFSET_VALUE + _NO_GROUP + _NO_EXTRA
            return kind, offset_key + (value.offset, value.leader_epoch, value.metadata, value.commit_timestamp,
                                       value.expire_timestamp) + _NO_GROUP + _NO_EXTRA
        group_key = (getattr(key, "group", None) or getattr(key, "group_id", None), None, None)
        member_id = getattr(key, "member_id", None)
        if isinstance(value, GroupMetadataValue):
            return kind, group_key + _NO_OFFSET_VALUE + _group_section(value) + (member_id, None, None)
        if value is None:
            return kind, group_key + _NO_OFFSET_VALUE + _NO_GROUP + (member_id, None, None)
        epoch = next((getattr(value, name) for name in _EPOCH_FIELDS if getattr(value, name, None) is not None), None)
        return kind, group_key + _NO_OFFSET_VALUE + (epoch,) + _NO_GROUP[1:] + (member_id, describe(value), None)
