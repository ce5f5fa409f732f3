"""Key/value codecs for the records of the internal ``__consumer_offsets`` topic.

A key is an int16 record type followed by the key struct; a value is an int16
schema version followed by the value struct (or ``None``: a tombstone). The
schemas are declared once, as data (``_OWN_SCHEMAS``, record_schemas.py), and one generic reader and
writer walk them, so a new record type is a declaration, not new parsing code.
The layouts follow /work/shared/kafka-spec/records/*.json; the share-group records (types 10-15)
follow Kafka 4.3.1's group-coordinator schemas, which are newer than that snapshot.

The consumer-group and share-group records (types 3-8 and 10-15) are declared in consumer_share_records,
which is imported on first use (a classic-only broker never needs them, and their 31 dataclasses were ~8 % of
the daemon's start-up): their names are reached as attributes of this module all the same (``__getattr__``), and
the reader imports them when it meets a record type it does not know yet.
"""

from __future__ import annotations

import struct
import sys
import uuid
from types import ModuleType
from typing import TYPE_CHECKING, Any, Union

from groupcoord.protocol.varint import VARINT_MAX_BYTES, VarintError, decode_unsigned_varint, encode_unsigned_varint
from groupcoord.protocol.frozen import builder, frozen_dataclass
from groupcoord.protocol.memo import Memo

from groupcoord.coordinator.groups.record_schemas import (
    KEY_TYPE_WRITTEN,
    RECORD_TYPES,
    SCHEMAS,
    VALUE_INFO,
    Field as _Field,
    RecordType,
    Schema,
    add_record_types,
    field as _f,
)


class RecordFormatError(ValueError):
    """A record of a known type whose bytes do not match its schema."""


# --------------------------------------------------------------------------- dataclasses


@frozen_dataclass
class OffsetCommitKey:
    """The key of an offset commit record (type 1): group, topic, partition."""
    group: str
    topic: str
    partition: int


@frozen_dataclass
class OffsetCommitValue:
    """An offset commit record's value: offset, leader epoch, metadata, commit and expire timestamps."""
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int | None = None


new_offset_value = builder(OffsetCommitValue)
"""``OffsetCommitValue(...)`` at under half the cost (protocol.frozen.builder): for the two places that make one per
record, the replay and the lane's commit (~2,700 instructions of a commit's ~112,000)."""


@frozen_dataclass
class GroupMetadataKey:
    """The key of a classic group's metadata record (type 2): the group id."""
    group: str


@frozen_dataclass
class MemberMetadata:
    """One member of a classic group's metadata record, as Kafka writes it."""
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@frozen_dataclass
class GroupMetadataValue:
    """A classic group's metadata record: protocol type and name, generation, leader, members."""
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberMetadata, ...] = ()


@frozen_dataclass
class UnknownKey:
    """A record type this coordinator does not know; the loader skips it with a warning."""

    record_type: int
    raw: bytes


if TYPE_CHECKING:
    from groupcoord.coordinator.groups import consumer_share_records as _cs

    AnyKey = Union[
        OffsetCommitKey,
        GroupMetadataKey,
        _cs.ConsumerGroupMetadataKey,
        _cs.ConsumerGroupPartitionMetadataKey,
        _cs.ConsumerGroupMemberMetadataKey,
        _cs.ConsumerGroupTargetAssignmentMetadataKey,
        _cs.ConsumerGroupTargetAssignmentMemberKey,
        _cs.ConsumerGroupCurrentMemberAssignmentKey,
        _cs.ShareGroupMemberMetadataKey,
        _cs.ShareGroupMetadataKey,
        _cs.ShareGroupTargetAssignmentMetadataKey,
        _cs.ShareGroupTargetAssignmentMemberKey,
        _cs.ShareGroupCurrentMemberAssignmentKey,
        _cs.ShareGroupStatePartitionMetadataKey,
    ]
    AnyValue = Union[
        OffsetCommitValue,
        GroupMetadataValue,
        _cs.ConsumerGroupMetadataValue,
        _cs.ConsumerGroupPartitionMetadataValue,
        _cs.ConsumerGroupMemberMetadataValue,
        _cs.ConsumerGroupTargetAssignmentMetadataValue,
        _cs.ConsumerGroupTargetAssignmentMemberValue,
        _cs.ConsumerGroupCurrentMemberAssignmentValue,
        _cs.ShareGroupMemberMetadataValue,
        _cs.ShareGroupMetadataValue,
        _cs.ShareGroupTargetAssignmentMetadataValue,
        _cs.ShareGroupTargetAssignmentMemberValue,
        _cs.ShareGroupCurrentMemberAssignmentValue,
        _cs.ShareGroupStatePartitionMetadataValue,
    ]

# --------------------------------------------------------------------------- schemas as data

# (fields, first flexible version or None)
_OWN_SCHEMAS: dict[type, Schema] = {
    OffsetCommitKey: ((_f("group", "string"), _f("topic", "string"), _f("partition", "int32")), None),
    OffsetCommitValue: (
        (
            _f("offset", "int64"),
            _f("leader_epoch", "int32", 3, default=-1),
            _f("metadata", "string"),
            _f("commit_timestamp", "int64"),
            _f("expire_timestamp", "int64", 1, 1, default=None),
        ),
        4,
    ),
    GroupMetadataKey: ((_f("group", "string"),), None),
    MemberMetadata: (
        (
            _f("member_id", "string"),
            _f("group_instance_id", "string", 3, nullable=True, default=None),
            _f("client_id", "string"),
            _f("client_host", "string"),
            _f("rebalance_timeout", "int32", 1, default=-1),
            _f("session_timeout", "int32"),
            _f("subscription", "bytes"),
            _f("assignment", "bytes"),
        ),
        4,
    ),
    GroupMetadataValue: (
        (
            _f("protocol_type", "string"),
            _f("generation", "int32"),
            _f("protocol", "string", nullable=True),
            _f("leader", "string", nullable=True),
            _f("current_state_timestamp", "int64", 2, default=-1),
            _f("members", ("array", MemberMetadata)),
        ),
        4,
    ),
}

# record type -> (key class, value class, value versions readable, value version written)
_OWN_RECORD_TYPES: dict[int, RecordType] = {
    0: (OffsetCommitKey, OffsetCommitValue, (0, 4), 3),
    1: (OffsetCommitKey, OffsetCommitValue, (0, 4), 3),
    2: (GroupMetadataKey, GroupMetadataValue, (0, 4), 3),
}
add_record_types(_OWN_SCHEMAS, _OWN_RECORD_TYPES)  # offset keys are written as type 1, the higher
# The reader and writer look up record_schemas' tables: every record type's (these, and consumer_share_records'
# once imported).

_consumer_share_records: ModuleType | None = None  # once _load_consumer_share_records has run


def _load_consumer_share_records() -> ModuleType:
    """Import consumer_share_records (which adds its record types to the registry) and bind its names here, so
    that ``offsets_records.X`` is an ordinary attribute from then on."""
    global _consumer_share_records
    from groupcoord.coordinator.groups import consumer_share_records as module

    globals().update((name, getattr(module, name)) for name in module.__all__)
    _consumer_share_records = module
    return module


def __getattr__(name: str) -> Any:
    """PEP 562: a consumer- or share-group record name, first asked for, imports consumer_share_records. (Its
    names are capitalised: probing this module for a lower-case attribute does not import it.)"""
    if name[:1].isupper():
        module = _load_consumer_share_records()
        if name in module.__all__:
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- generic reader


_INT = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"), "int64": struct.Struct(">q")}


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf = buf
        self.pos = pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise RecordFormatError(f"record truncated at byte {self.pos} (need {n} more)")
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def int(self, kind: str) -> int:
        s = _INT[kind]
        return s.unpack(self.take(s.size))[0]

    def uvarint(self) -> int:
        try:
            value, self.pos = decode_unsigned_varint(self.buf, self.pos, VARINT_MAX_BYTES)
        except VarintError as exc:
            raise RecordFormatError(f"record truncated or malformed at byte {self.pos}: {exc}") from exc
        return value

    def length(self, flexible: bool, wide: bool) -> int:
        """Length of a string/bytes/array; -1 means null."""
        if flexible:
            return self.uvarint() - 1
        return self.int("int32" if wide else "int16")


def _read_kind(r: _Reader, kind: Any, flexible: bool, nullable: bool, version: int) -> Any:
    if kind in _INT:
        return r.int(kind)
    if kind == "uuid":
        return uuid.UUID(bytes=r.take(16))
    if kind == "string":
        n = r.length(flexible, wide=False)
        if n < 0:
            if not nullable:
                raise RecordFormatError("null in a non-nullable string")
            return None
        try:
            return r.take(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"invalid UTF-8: {exc}") from exc
    if kind == "bytes":
        n = r.length(flexible, wide=True)
        if n < 0:
            if not nullable:
                raise RecordFormatError("null in non-nullable bytes")
            return None
        return r.take(n)
    if isinstance(kind, tuple) and kind[0] == "array":
        n = r.length(flexible, wide=True)
        if n < 0:
            if not nullable:
                raise RecordFormatError("null in a non-nullable array")
            return None
        return tuple(_read_kind(r, kind[1], flexible, False, version) for _ in range(n))
    if isinstance(kind, type):
        # A nullable struct is preceded by a presence marker: Kafka writes -1 (null) or 1 for a plain field,
        # and the unsigned varint 0 (null) or 1 for a tagged one.
        if nullable and r.int("int8") <= 0:
            return None
        return _read_struct(r, kind, version)
    raise RecordFormatError(f"unknown schema kind {kind!r}")


def _read_struct(r: _Reader, cls: type, version: int) -> Any:
    schema, first_flexible = SCHEMAS[cls]
    flexible = first_flexible is not None and version >= first_flexible
    values: dict[str, Any] = {}
    tagged = {}
    for fld in schema:
        if fld.tag is not None:
            tagged[fld.tag] = fld
            values[fld.name] = fld.default
        elif fld.present(version):
            values[fld.name] = _read_kind(r, fld.kind, flexible, fld.nullable, version)
        else:
            values[fld.name] = fld.default
    if flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            fld = tagged.get(tag)
            if fld is None:
                r.take(size)  # unknown tagged field: skipped, that is what makes tags forward compatible
                continue
            sub = _Reader(r.take(size))
            values[fld.name] = _read_kind(sub, fld.kind, True, fld.nullable, version)
    return cls(**values)


# --------------------------------------------------------------------------- generic writer


def _write_length(out: bytearray, n: int, flexible: bool, wide: bool) -> None:
    if flexible:
        out += encode_unsigned_varint(n + 1)
    else:
        out += _INT["int32" if wide else "int16"].pack(n)


def _write_kind(out: bytearray, kind: Any, value: Any, flexible: bool, nullable: bool, version: int) -> None:
    if kind in _INT:
        out += _INT[kind].pack(value)
    elif kind == "uuid":
        out += value.bytes
    elif kind in ("string", "bytes"):
        if value is None:
            if not nullable:
                raise ValueError(f"null {kind} in a non-nullable field")
            _write_length(out, -1, flexible, kind == "bytes")
            return
        data = value.encode("utf-8") if kind == "string" else bytes(value)
        _write_length(out, len(data), flexible, kind == "bytes")
        out += data
    elif isinstance(kind, tuple) and kind[0] == "array":
        if value is None:
            _write_length(out, -1, flexible, True)
            return
        _write_length(out, len(value), flexible, True)
        for item in value:
            _write_kind(out, kind[1], item, flexible, False, version)
    elif isinstance(kind, type):
        if nullable:
            if value is None:
                out += _INT["int8"].pack(-1)
                return
            out += _INT["int8"].pack(1)
        _write_struct(out, value, version)
    else:
        raise ValueError(f"unknown schema kind {kind!r}")


_TAGGED_NULL_STRUCT = b"\x00"


def _write_struct(out: bytearray, obj: Any, version: int) -> None:
    schema, first_flexible = SCHEMAS[type(obj)]
    flexible = first_flexible is not None and version >= first_flexible
    tagged: list[tuple[int, bytes]] = []
    for fld in schema:
        value = getattr(obj, fld.name)
        if fld.tag is not None:
            if flexible and value is None and fld.nullable and isinstance(fld.kind, type):
                tagged.append((fld.tag, _TAGGED_NULL_STRUCT))  # Kafka writes a null tagged struct, marker 0
            elif flexible and value != fld.default:
                buf = bytearray()
                _write_kind(buf, fld.kind, value, True, fld.nullable, version)
                tagged.append((fld.tag, bytes(buf)))
        elif fld.present(version):
            if value is None and fld.default is None and not fld.nullable and fld.kind in _INT:
                value = -1  # an optional int (e.g. expire_timestamp) written in a version that carries it
            _write_kind(out, fld.kind, value, flexible, fld.nullable, version)
    if flexible:
        out += encode_unsigned_varint(len(tagged))
        for tag, data in tagged:
            out += encode_unsigned_varint(tag) + encode_unsigned_varint(len(data)) + data


# --------------------------------------------------------------------------- public API


_I16 = struct.Struct(">h")
_OFFSET_V0_V2 = struct.Struct(">qh")  # offset, metadata length
_OFFSET_V3 = struct.Struct(">qih")  # offset, leader epoch, metadata length
_I64 = struct.Struct(">q")
_I64X2 = struct.Struct(">qq")


def _fast_offset_key(key: bytes) -> OffsetCommitKey | None:
    """Offset-commit keys (types 0 and 1) are most of any offsets log: read them with three unpacks
    instead of the schema walk. Anything unexpected returns None and takes the general path."""
    fields = offset_key_fields(key)
    return None if fields is None else OffsetCommitKey(*fields)


def offset_key_fields(key: bytes) -> tuple[str, str, int] | None:
    """An offset-commit key (type 0 or 1) as (group, topic, partition), the names interned: a replay
    reads a million of them and the state keeps the names (one copy of each instead of one per record).
    None: not an offset-commit key, or unexpected bytes (the general reader then gives the precise error)."""
    if len(key) < 4 or key[0] != 0 or key[1] > 1:
        return None
    try:
        glen = _I16.unpack_from(key, 2)[0]
        tpos = 4 + glen
        tlen = _I16.unpack_from(key, tpos)[0]
        ppos = tpos + 2 + tlen
        if glen < 0 or tlen < 0 or len(key) < ppos + 4:
            return None
        return _intern(key[4:tpos].decode()), _intern(key[tpos + 2 : ppos].decode()), _I32.unpack_from(key, ppos)[0]
    except (struct.error, UnicodeDecodeError):
        return None


_intern = sys.intern
_I32 = struct.Struct(">i")


def offset_value_fields(value: bytes) -> tuple[int, int, str, int, int | None] | None:
    """OffsetCommitValue v0-v3 (v3 is what Kafka writes) as (offset, leader epoch, metadata, commit
    timestamp, expire timestamp or None), without the schema walk and without building the value: the
    replay and the offsets pipeline read millions of these. None means "use the general reader", which
    also produces the precise error for malformed bytes."""
    try:
        version = _I16.unpack_from(value, 0)[0]
        if version == 3:
            offset, epoch, mlen = _OFFSET_V3.unpack_from(value, 2)
            pos = 16
        elif 0 <= version <= 2:
            offset, mlen = _OFFSET_V0_V2.unpack_from(value, 2)
            epoch, pos = -1, 12
        else:
            return None
        if mlen < 0:
            return None
        metadata = value[pos : pos + mlen].decode()
        pos += mlen
        if version == 1:
            commit, expire = _I64X2.unpack_from(value, pos)
            return offset, epoch, metadata, commit, None if expire == -1 else expire
        return offset, epoch, metadata, _I64.unpack_from(value, pos)[0], None
    except (struct.error, UnicodeDecodeError):
        return None


def _fast_offset_value(value: bytes) -> OffsetCommitValue | None:
    fields = offset_value_fields(value)
    return None if fields is None else OffsetCommitValue(*fields)


def decode_key(key: bytes) -> AnyKey | UnknownKey:
    """Decode a record key; a record type this coordinator does not know yields ``UnknownKey``."""
    if len(key) >= 2 and key[0] == 0 and key[1] in (0, 1):
        fast = _fast_offset_key(key)
        if fast is not None:
            return fast
    r = _Reader(key)
    record_type = r.int("int16")
    info = RECORD_TYPES.get(record_type)
    if info is None and _consumer_share_records is None:
        _load_consumer_share_records()  # perhaps one of its record types
        info = RECORD_TYPES.get(record_type)
    if info is None:
        return UnknownKey(record_type, bytes(key))
    return _read_struct(r, info[0], record_type)


def record_type_of(key: AnyKey) -> int:
    """The int16 record type a key is written with (offset commits: 1)."""
    return KEY_TYPE_WRITTEN[type(key)]


def decode_value(key: AnyKey, value: bytes | None) -> AnyValue | None:
    """Decode the value belonging to ``key``; ``None`` (a tombstone) stays ``None``."""
    if value is None:
        return None
    if type(key) is OffsetCommitKey:
        fast = _fast_offset_value(value)
        if fast is not None:
            return fast
    elif type(key) is GroupMetadataKey and value[:2] == _GROUP_VALUE_V3:
        fast = _fast_group_value_v3(value)
        if fast is not None:
            return fast
    value_cls = RECORD_TYPES[record_type_of(key)][1]
    versions, _ = VALUE_INFO[value_cls]
    r = _Reader(value)
    version = r.int("int16")
    if not versions[0] <= version <= versions[1]:
        raise RecordFormatError(f"{value_cls.__name__} version {version} is not one of {versions[0]}-{versions[1]}")
    decoded = _read_struct(r, value_cls, version)
    if isinstance(decoded, OffsetCommitValue) and decoded.expire_timestamp == -1:
        decoded = OffsetCommitValue(decoded.offset, decoded.leader_epoch, decoded.metadata, decoded.commit_timestamp, None)
    return decoded


def _fast_group_value_v3(value: bytes) -> GroupMetadataValue | None:
    """GroupMetadataValue v3 (what `_encode_group_value_v3` and Kafka write), read field by field: the generic
    reader's schema walk is most of the cost of replaying or analysing a group's record. None for anything it
    does not read as the generic reader would (a null where a value is due, a negative count, invalid UTF-8, a
    truncated value), which then goes to the generic reader for its precise error. Trailing bytes are ignored,
    as the generic reader ignores them. Held to it by tests/coordinator/groups/test_offsets_records_fast.py."""
    value = bytes(value)
    end = len(value)
    h, i = _H.unpack_from, _I.unpack_from

    def string(pos: int, nullable: bool) -> tuple[str | None, int]:
        n = h(value, pos)[0]
        pos += 2
        if n < 0:
            if nullable:
                return None, pos
            raise ValueError("null string")
        if pos + n > end:
            raise ValueError("truncated")
        return value[pos:pos + n].decode("utf-8"), pos + n

    def blob(pos: int) -> tuple[bytes, int]:
        n = i(value, pos)[0]
        pos += 4
        if n < 0 or pos + n > end:
            raise ValueError("null or truncated bytes")
        return value[pos:pos + n], pos + n

    try:
        protocol_type, pos = string(2, False)
        generation = i(value, pos)[0]
        protocol, pos = string(pos + 4, True)
        leader, pos = string(pos, True)
        timestamp, count = _Q.unpack_from(value, pos)[0], i(value, pos + 8)[0]
        pos += 12
        if count < 0:
            return None
        members = []
        for _ in range(count):
            member_id, pos = string(pos, False)
            instance_id, pos = string(pos, True)
            client_id, pos = string(pos, False)
            client_host, pos = string(pos, False)
            rebalance_timeout, session_timeout = _TIMEOUTS.unpack_from(value, pos)
            subscription, pos = blob(pos + 8)
            assignment, pos = blob(pos)
            members.append(MemberMetadata(member_id, instance_id, client_id, client_host, rebalance_timeout,
                                          session_timeout, subscription, assignment))
    except (struct.error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    return GroupMetadataValue(protocol_type, generation, protocol, leader, timestamp, tuple(members))


def decode_record(key: bytes, value: bytes | None) -> tuple[AnyKey | UnknownKey, AnyValue | None]:
    """Key and value of one log record; the value of an unknown record type is not interpreted (None)."""
    decoded = decode_key(key)
    if isinstance(decoded, UnknownKey):
        return decoded, None
    return decoded, decode_value(decoded, value)


_OFFSET_KEY_TYPE = b"\x00\x01"  # offset keys are written as record type 1
_H = struct.Struct(">h")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")
_VALUE_V3_HEAD = struct.Struct(">hqih")  # version 3, offset, leader epoch, metadata length


def _encode_offset_key(key: OffsetCommitKey) -> bytes:
    """The one key written per committed offset, spelled out (the generic writer walks its schema);
    tests/coordinator/groups/test_offsets_records_fast.py holds it to the generic writer."""
    group = key.group.encode("utf-8")
    topic = key.topic.encode("utf-8")
    return b"".join((_OFFSET_KEY_TYPE, _H.pack(len(group)), group, _H.pack(len(topic)), topic, _I.pack(key.partition)))


def _encode_offset_value_v3(value: OffsetCommitValue) -> bytes:
    metadata = value.metadata
    if not metadata:  # what nearly every client commits: the whole value in one pack
        return _VALUE_V3_NO_METADATA.pack(3, value.offset, value.leader_epoch, 0, value.commit_timestamp)
    raw = metadata.encode("utf-8")
    return b"".join((_VALUE_V3_HEAD.pack(3, value.offset, value.leader_epoch, len(raw)), raw,
                     _Q.pack(value.commit_timestamp)))


_VALUE_V3_NO_METADATA = struct.Struct(">hqihq")  # version 3, offset, leader epoch, empty metadata, commit time

OFFSET_KEYS_CACHED = 16384
"""Encoded offset keys remembered, by (group, topic, partition): a committer commits the same partitions over
and over, and the key is the same bytes each time (~150 bytes each remembered; emptied when full)."""
_offset_keys = Memo(lambda where: _encode_offset_key(OffsetCommitKey(*where)), OFFSET_KEYS_CACHED)


_GROUP_KEY_TYPE = b"\x00\x02"
_GROUP_VALUE_V3 = b"\x00\x03"
_NULL_STRING = _H.pack(-1)
_TIMEOUTS = struct.Struct(">ii")


def _encode_group_key(key: GroupMetadataKey) -> bytes:
    group = key.group.encode("utf-8")
    return b"".join((_GROUP_KEY_TYPE, _H.pack(len(group)), group))


def _encode_group_value_v3(value: GroupMetadataValue) -> bytes:
    """GroupMetadataValue v3 (what every completed rebalance and stored assignment writes), spelled out:
    the generic writer's schema walk was most of a classic group's record cost. Held to the generic writer
    by tests/coordinator/groups/test_offsets_records_fast.py; anything it cannot write as the generic
    writer would (a None where a string is due, a length past its field) raises, and the caller then
    lets the generic writer judge it."""
    pack_h = _H.pack
    raw = value.protocol_type.encode("utf-8")
    parts = [_GROUP_VALUE_V3, pack_h(len(raw)), raw, _I.pack(value.generation)]
    for text in (value.protocol, value.leader):  # nullable strings, inline as the members' (no helper call each)
        if text is None:
            parts.append(_NULL_STRING)
        else:
            raw = text.encode("utf-8")
            parts += (pack_h(len(raw)), raw)
    members = value.members
    parts += (_Q.pack(value.current_state_timestamp), _I.pack(len(members)))
    for m in members:  # each member's strings written inline (no helper call per field: 4-5 per member)
        if type(m) is not MemberMetadata:
            raise TypeError("not a MemberMetadata")
        raw = m.member_id.encode("utf-8")
        parts += (pack_h(len(raw)), raw)
        instance = m.group_instance_id
        if instance is None:
            parts.append(_NULL_STRING)
        else:
            raw = instance.encode("utf-8")
            parts += (pack_h(len(raw)), raw)
        raw = m.client_id.encode("utf-8")
        host = m.client_host.encode("utf-8")
        subscription = bytes(m.subscription)
        assignment = bytes(m.assignment)
        parts += (pack_h(len(raw)), raw, pack_h(len(host)), host,
                  _TIMEOUTS.pack(m.rebalance_timeout, m.session_timeout),
                  _I.pack(len(subscription)), subscription, _I.pack(len(assignment)), assignment)
    return b"".join(parts)


def encode_key(key: AnyKey) -> bytes:
    if type(key) is OffsetCommitKey:
        return _offset_keys[key.group, key.topic, key.partition]
    if type(key) is GroupMetadataKey and type(key.group) is str:
        try:
            return _encode_group_key(key)
        except (struct.error, UnicodeEncodeError):
            return _encode_key_generic(key)  # the generic writer's to refuse
    return _encode_key_generic(key)


def _encode_key_generic(key: AnyKey) -> bytes:
    record_type = record_type_of(key)
    out = bytearray(_INT["int16"].pack(record_type))
    _write_struct(out, key, record_type)
    return bytes(out)


def default_value_version(value: AnyValue) -> int:
    """The version Kafka writes: OffsetCommitValue v1 only when an explicit expiry is set, else v3; others per table."""
    if isinstance(value, OffsetCommitValue) and value.expire_timestamp is not None:
        return 1
    return VALUE_INFO[type(value)][1]


def encode_value(value: AnyValue | None, version: int | None = None) -> bytes | None:
    """Encode a value at ``version`` (default: the version Kafka writes); ``None`` stays a tombstone."""
    if value is None:
        return None
    if type(value) is OffsetCommitValue and value.expire_timestamp is None and (version is None or version == 3):
        return _encode_offset_value_v3(value)  # what every commit without a retention time writes
    if type(value) is GroupMetadataValue and version in (None, 3):
        try:
            return _encode_group_value_v3(value)
        except (TypeError, AttributeError, struct.error, UnicodeEncodeError):
            return _encode_value_generic(value, version)  # the generic writer's to judge (and refuse)
    return _encode_value_generic(value, version)


def _encode_value_generic(value: AnyValue, version: int | None = None) -> bytes:
    versions, _ = VALUE_INFO[type(value)]
    if version is None:
        version = default_value_version(value)
    if not versions[0] <= version <= versions[1]:
        raise ValueError(f"{type(value).__name__} has no version {version}")
    out = bytearray(_INT["int16"].pack(version))
    _write_struct(out, value, version)
    return bytes(out)
