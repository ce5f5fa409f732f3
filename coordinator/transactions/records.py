"""The ``__transaction_state`` record codec: TransactionLogKey (v0) and TransactionLogValue (v0, and the
flexible v1 with its tagged fields), as ../shared/kafka-spec/records has them.

A key is int16 version 0 + the transactional id; a value is int16 version + the struct, or None (the
tombstone of an expired transactional id). Kafka writes value v0 until ``transaction.version`` 1 is
finalized and v1 from then on; this coordinator serves transaction version 0 (Transactions V1), so it
writes v0, and reads both (a log copied from a Kafka 4.3 broker holds v1).
"""

from __future__ import annotations

import struct
from dataclasses import field

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.schema_reader import SchemaReader
from groupcoord.protocol.varint import encode_unsigned_varint

KEY_VERSION = 0
VALUE_VERSION = 0
FLEXIBLE_VERSION = 1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1

_TAG_PREVIOUS_PRODUCER_ID = 0
_TAG_NEXT_PRODUCER_ID = 1
_TAG_CLIENT_TRANSACTION_VERSION = 2

_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class TransactionRecordError(ValueError):
    """A ``__transaction_state`` record whose bytes do not match its schema."""


@frozen_dataclass
class TransactionLogKey:
    """The key of a __transaction_state record: the transactional id."""
    transactional_id: str


@frozen_dataclass
class TransactionLogValue:
    """The value of a __transaction_state record: producer id and epoch, timeout, state and partitions."""
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_status: int
    transaction_partitions: tuple[tuple[str, tuple[int, ...]], ...] | None
    transaction_last_update_timestamp_ms: int
    transaction_start_timestamp_ms: int
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    client_transaction_version: int = 0
    version: int = field(default=VALUE_VERSION, compare=False)


@frozen_dataclass
class UnknownTransactionKey:
    """A key of a version this coordinator does not know (Kafka's UnknownKey): skipped, kept in the log."""

    version: int


# --------------------------------------------------------------------------- reading


def decode_key(key: bytes) -> TransactionLogKey | UnknownTransactionKey:
    r = SchemaReader(key, TransactionRecordError)
    version = r.take(_I16)
    if version != KEY_VERSION:
        return UnknownTransactionKey(version)
    return TransactionLogKey(r.string(False))


def decode_value(value: bytes | None) -> TransactionLogValue | None:
    if value is None:
        return None
    r = SchemaReader(value, TransactionRecordError)
    version = r.take(_I16)
    if version not in (0, FLEXIBLE_VERSION):
        raise TransactionRecordError(f"unknown TransactionLogValue version {version}")
    flexible = version >= FLEXIBLE_VERSION
    producer_id = r.take(_I64)
    producer_epoch = r.take(_I16)
    timeout = r.take(_I32)
    status = r.take(_I8)
    count = r.array_length(flexible, nullable=True)
    partitions: list[tuple[str, tuple[int, ...]]] | None = None
    if count >= 0:
        partitions = []
        for _ in range(count):
            topic = r.string(flexible)
            ids = tuple(r.take(_I32) for _ in range(r.array_length(flexible, nullable=True)))
            if flexible:
                r.tagged_fields()
            partitions.append((topic, ids))
    last_update = r.take(_I64)
    start = r.take(_I64)
    previous_pid, next_pid, client_tv = NO_PRODUCER_ID, NO_PRODUCER_ID, 0
    if flexible:
        tags = r.tagged_fields()
        if _TAG_PREVIOUS_PRODUCER_ID in tags:
            previous_pid = _I64.unpack(tags[_TAG_PREVIOUS_PRODUCER_ID])[0]
        if _TAG_NEXT_PRODUCER_ID in tags:
            next_pid = _I64.unpack(tags[_TAG_NEXT_PRODUCER_ID])[0]
        if _TAG_CLIENT_TRANSACTION_VERSION in tags:
            client_tv = _I16.unpack(tags[_TAG_CLIENT_TRANSACTION_VERSION])[0]
    return TransactionLogValue(producer_id, producer_epoch, timeout, status,
                               None if partitions is None else tuple(partitions), last_update, start,
                               previous_pid, next_pid, client_tv, version)


def decode_record(key: bytes, value: bytes | None) -> tuple[TransactionLogKey | UnknownTransactionKey,
                                                             TransactionLogValue | None]:
    decoded = decode_key(key)
    if isinstance(decoded, UnknownTransactionKey):
        return decoded, None
    return decoded, decode_value(value)


# --------------------------------------------------------------------------- writing


def _string(out: bytearray, text: str, flexible: bool) -> None:
    data = text.encode("utf-8")
    out += encode_unsigned_varint(len(data) + 1) if flexible else _I16.pack(len(data))
    out += data


def _array_length(out: bytearray, n: int, flexible: bool) -> None:
    out += encode_unsigned_varint(n + 1) if flexible else _I32.pack(n)


def encode_key(key: TransactionLogKey) -> bytes:
    out = bytearray(_I16.pack(KEY_VERSION))
    _string(out, key.transactional_id, False)
    return bytes(out)


def encode_value(value: TransactionLogValue | None, version: int | None = None) -> bytes | None:
    if value is None:
        return None
    version = value.version if version is None else version
    flexible = version >= FLEXIBLE_VERSION
    out = bytearray(_I16.pack(version))
    out += _I64.pack(value.producer_id) + _I16.pack(value.producer_epoch) + _I32.pack(value.transaction_timeout_ms)
    out += _I8.pack(value.transaction_status)
    if value.transaction_partitions is None:
        out += encode_unsigned_varint(0) if flexible else _I32.pack(-1)
    else:
        _array_length(out, len(value.transaction_partitions), flexible)
        for topic, ids in value.transaction_partitions:
            _string(out, topic, flexible)
            _array_length(out, len(ids), flexible)
            for partition in ids:
                out += _I32.pack(partition)
            if flexible:
                out += encode_unsigned_varint(0)
    out += _I64.pack(value.transaction_last_update_timestamp_ms) + _I64.pack(value.transaction_start_timestamp_ms)
    if flexible:
        tags = []
        if value.previous_producer_id != NO_PRODUCER_ID:
            tags.append((_TAG_PREVIOUS_PRODUCER_ID, _I64.pack(value.previous_producer_id)))
        if value.next_producer_id != NO_PRODUCER_ID:
            tags.append((_TAG_NEXT_PRODUCER_ID, _I64.pack(value.next_producer_id)))
        if value.client_transaction_version != 0:
            tags.append((_TAG_CLIENT_TRANSACTION_VERSION, _I16.pack(value.client_transaction_version)))
        out += encode_unsigned_varint(len(tags))
        for tag, data in tags:
            out += encode_unsigned_varint(tag) + encode_unsigned_varint(len(data)) + data
    return bytes(out)
