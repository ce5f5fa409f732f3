"""The ``__share_group_state`` record codec: ShareSnapshotKey/Value (record type 0) and ShareUpdateKey/Value
(record type 1), laid out as Kafka 4.3's share coordinator writes them (kafka-share-coordinator's
``ShareSnapshotValue.json``/``ShareUpdateValue.json``).

A key is int16 record type + GroupId (int16-length string) + TopicId (16 bytes) + Partition (int32). A value
is int16 version 0 + a flexible struct: compact arrays, tagged fields (tag 0 = DeliveryCompleteCount, KIP-1226,
written when known). A tombstone (value None) removes a share partition's state (DeleteShareGroupState).
"""

from __future__ import annotations

import struct
import uuid

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.schema_reader import SchemaReader
from groupcoord.protocol.varint import encode_unsigned_varint

SNAPSHOT_KEY_TYPE = 0
UPDATE_KEY_TYPE = 1
VALUE_VERSION = 0
_TAG_DELIVERY_COMPLETE_COUNT = 0

_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class ShareRecordError(ValueError):
    """A ``__share_group_state`` record whose bytes do not match its schema."""


@frozen_dataclass
class StateBatch:
    """A run of offsets with one delivery state (0 AVAILABLE, 2 ACKNOWLEDGED, 4 ARCHIVED) and delivery count."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@frozen_dataclass
class ShareKey:
    """Which share partition: ``group:topicId:partition`` (Kafka's SharePartitionKey). ``kind`` is the record
    type (snapshot or update); both kinds of one share partition compact separately, as in Kafka."""

    kind: int
    group_id: str
    topic_id: uuid.UUID
    partition: int

    @property
    def share_partition(self) -> tuple[str, uuid.UUID, int]:
        return (self.group_id, self.topic_id, self.partition)


@frozen_dataclass
class ShareSnapshotValue:
    """ShareSnapshotValue of __share_group_state: a share partition's whole state at a snapshot epoch."""
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    state_batches: tuple[StateBatch, ...]
    delivery_complete_count: int = -1


@frozen_dataclass
class ShareUpdateValue:
    """ShareUpdateValue of __share_group_state: state batches changed since the snapshot."""
    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    state_batches: tuple[StateBatch, ...]
    delivery_complete_count: int = -1


@frozen_dataclass
class UnknownShareKey:
    """A record type this coordinator does not know: skipped on load (Kafka's UnknownKey)."""

    kind: int


ShareValue = ShareSnapshotValue | ShareUpdateValue


def _read_batches(r: SchemaReader) -> tuple[StateBatch, ...]:
    out = []
    for _ in range(r.array_length(flexible=True)):
        batch = StateBatch(r.take(_I64), r.take(_I64), r.take(_I8), r.take(_I16))
        r.tagged_fields()
        out.append(batch)
    return tuple(out)


def _complete_count(tags: dict[int, bytes]) -> int:
    data = tags.get(_TAG_DELIVERY_COMPLETE_COUNT)
    if data is None:
        return -1
    if len(data) != 4:
        raise ShareRecordError("DeliveryCompleteCount tag is not 4 bytes")
    return _I32.unpack(data)[0]


def decode_key(key: bytes) -> ShareKey | UnknownShareKey:
    r = SchemaReader(key, ShareRecordError)
    kind = r.take(_I16)
    if kind not in (SNAPSHOT_KEY_TYPE, UPDATE_KEY_TYPE):
        return UnknownShareKey(kind)
    n = r.take(_I16)
    group = r.raw(n).decode("utf-8")
    topic_id = uuid.UUID(bytes=r.raw(16))
    return ShareKey(kind, group, topic_id, r.take(_I32))


def decode_value(kind: int, value: bytes | None) -> ShareValue | None:
    if value is None:
        return None
    r = SchemaReader(value, ShareRecordError)
    version = r.take(_I16)
    if version != VALUE_VERSION:
        raise ShareRecordError(f"unknown share state value version {version}")
    snapshot_epoch = r.take(_I32)
    if kind == SNAPSHOT_KEY_TYPE:
        state_epoch, leader_epoch, start = r.take(_I32), r.take(_I32), r.take(_I64)
        created, written = r.take(_I64), r.take(_I64)
        batches = _read_batches(r)
        tags = r.tagged_fields()
        return ShareSnapshotValue(snapshot_epoch, state_epoch, leader_epoch, start, created, written, batches,
                                  _complete_count(tags))
    leader_epoch, start = r.take(_I32), r.take(_I64)
    batches = _read_batches(r)
    tags = r.tagged_fields()
    return ShareUpdateValue(snapshot_epoch, leader_epoch, start, batches, _complete_count(tags))


def decode_record(key: bytes, value: bytes | None) -> tuple[ShareKey | UnknownShareKey, ShareValue | None]:
    decoded = decode_key(key)
    if isinstance(decoded, UnknownShareKey):
        return decoded, None
    return decoded, decode_value(decoded.kind, value)


def encode_key(key: ShareKey) -> bytes:
    group = key.group_id.encode("utf-8")
    return _I16.pack(key.kind) + _I16.pack(len(group)) + group + key.topic_id.bytes + _I32.pack(key.partition)


def _write_batches(out: bytearray, batches: tuple[StateBatch, ...]) -> None:
    out += encode_unsigned_varint(len(batches) + 1)
    for b in batches:
        out += _I64.pack(b.first_offset) + _I64.pack(b.last_offset) + _I8.pack(b.delivery_state)
        out += _I16.pack(b.delivery_count) + b"\x00"


def _write_tags(out: bytearray, complete_count: int) -> None:
    if complete_count == -1:
        out += b"\x00"
        return
    out += b"\x01" + encode_unsigned_varint(_TAG_DELIVERY_COMPLETE_COUNT) + b"\x04" + _I32.pack(complete_count)


def encode_value(value: ShareValue | None) -> bytes | None:
    if value is None:
        return None
    out = bytearray(_I16.pack(VALUE_VERSION))
    out += _I32.pack(value.snapshot_epoch)
    if isinstance(value, ShareSnapshotValue):
        out += _I32.pack(value.state_epoch) + _I32.pack(value.leader_epoch) + _I64.pack(value.start_offset)
        out += _I64.pack(value.create_timestamp) + _I64.pack(value.write_timestamp)
    else:
        out += _I32.pack(value.leader_epoch) + _I64.pack(value.start_offset)
    _write_batches(out, value.state_batches)
    _write_tags(out, value.delivery_complete_count)
    return bytes(out)
