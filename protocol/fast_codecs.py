"""Hand-written codecs for the requests a busy coordinator answers most: Heartbeat and OffsetCommit, and
the JoinGroup and SyncGroup of every group that forms.

Why: kio's reader builds a typed entity (and the bounds check walks the bytes before it), and the
schema-driven encoder walks a plan per field; for a Heartbeat that is most of the request's Python. These
read the request straight from the frame into a light view with kio's attribute names (so a handler
cannot tell it from kio's entity and reads it the same way) and write the answer from pre-encoded parts.

kio stays the source of truth: tests/protocol/test_fast_codecs.py checks every version served here byte for
byte (answers) and field for field (requests) against kio, over generated values. Anything these do not
handle exactly as kio would — a multi-byte varint, a tagged field, an unusual null, bad UTF-8, bytes that
run out — makes them return ``None`` and the general path (bounds check, kio's reader, the schema
encoder) takes the request, so its errors and its refusals stay the only ones.

A reader is ``read(frame, version) -> (client_id, request) | None`` over the whole request frame (header
included, size prefix not); a writer is ``write(version, correlation_id, response) -> frame | None`` and
returns the size-prefixed frame.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.memo import Memo

_HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_I32_I64 = struct.Struct(">iq")
_I32_I32 = struct.Struct(">ii")
_I32_I64_I32 = struct.Struct(">iqi")
_I64_I32 = struct.Struct(">qi")
_FRAME_START = struct.Struct(">ii")  # size prefix, correlation id
_I32_I16 = struct.Struct(">ih")
_I32_I16_TAG = struct.Struct(">ihb")  # partition index, error code, empty tag buffer
_FLEXIBLE_START = struct.Struct(">iibiB")  # size, correlation id, header tags, throttle time, topic count + 1
_compact_names: dict[str, bytes] = {}  # topic name -> its compact string bytes (OffsetCommit's flexible answers)

_PLAIN_RETENTION_MS = 2**40  # ~35 years; beyond it the general path decides (kio refuses some)

_unpack_i16 = _I16.unpack_from
_unpack_i32 = _I32.unpack_from
_unpack_i64 = _I64.unpack_from

Reader = Callable[[bytes, int], "tuple[str | None, Any] | None"]
Writer = Callable[[int, int, Any], "bytes | None"]


class _Unhandled(Exception):
    """Raised inside a reader for input the general path must judge."""


@frozen_dataclass
class FastCodec:
    """The fast reader and writer of one API, and the versions they serve (a subset of what is served)."""

    api_key: int
    versions: range
    read: Reader
    write: Writer


# --------------------------------------------------------------------------- shared pieces


def _header(frame: bytes, flexible: bool) -> tuple[str | None, int]:
    """Client id and body offset of request header v1 (v2 when flexible, with no tagged fields)."""
    client_len = _unpack_i16(frame, 8)[0]
    pos = 10
    if client_len >= 0:
        end = pos + client_len
        if end > len(frame):
            raise _Unhandled
        client_id: str | None = frame[pos:end].decode("utf-8")
        pos = end
    elif client_len == -1:
        client_id = None
    else:
        raise _Unhandled
    if flexible:
        if frame[pos] != 0:  # header tagged fields: the general path skips them
            raise _Unhandled
        pos += 1
    return client_id, pos


def _string(frame: bytes, pos: int) -> tuple[str, int]:
    """A classic (int16 length) non-null string."""
    n = _unpack_i16(frame, pos)[0]
    pos += 2
    end = pos + n
    if n < 0 or end > len(frame):
        raise _Unhandled
    return frame[pos:end].decode("utf-8"), end


def _nullable_string(frame: bytes, pos: int) -> tuple[str | None, int]:
    n = _unpack_i16(frame, pos)[0]
    pos += 2
    if n == -1:
        return None, pos
    end = pos + n
    if n < 0 or end > len(frame):
        raise _Unhandled
    return frame[pos:end].decode("utf-8"), end


def _array_count(frame: bytes, pos: int) -> tuple[int, int]:
    """A classic (int32) non-null array count."""
    n = _unpack_i32(frame, pos)[0]
    if n < 0:
        raise _Unhandled
    return n, pos + 4


def _compact_array_count(frame: bytes, pos: int) -> tuple[int, int]:
    """A compact non-null array count that fits one varint byte (anything else: general path)."""
    n = frame[pos] - 1
    if n < 0 or n >= 0x7F:
        raise _Unhandled
    return n, pos + 1


def _compact_string(frame: bytes, pos: int) -> tuple[str, int]:
    """A compact non-null string whose length fits one varint byte (anything else: general path)."""
    n = frame[pos]
    if n == 0 or n >= 0x80:
        raise _Unhandled
    pos += 1
    end = pos + n - 1
    if end > len(frame):
        raise _Unhandled
    return frame[pos:end].decode("utf-8"), end


def _compact_nullable_string(frame: bytes, pos: int) -> tuple[str | None, int]:
    n = frame[pos]
    if n == 0:
        return None, pos + 1
    if n >= 0x80:
        raise _Unhandled
    pos += 1
    end = pos + n - 1
    if end > len(frame):
        raise _Unhandled
    return frame[pos:end].decode("utf-8"), end


def _no_tags(frame: bytes, pos: int) -> int:
    if frame[pos] != 0:
        raise _Unhandled
    return pos + 1


def _guarded(read: Callable[[bytes, int], tuple[str | None, Any]]) -> Reader:
    def guarded(frame: bytes, version: int) -> tuple[str | None, Any] | None:
        try:
            return read(frame, version)
        except (_Unhandled, IndexError, struct.error, UnicodeDecodeError):
            return None

    guarded.__name__ = read.__name__
    guarded.__doc__ = read.__doc__
    return guarded


def _frame(correlation_id: int, flexible: bool, body: bytes) -> bytes:
    """Response header v0 (v1 when flexible: one empty tag buffer) and the body, size-prefixed."""
    if flexible:
        return _FRAME_START.pack(len(body) + 5, correlation_id) + b"\x00" + body
    return _FRAME_START.pack(len(body) + 4, correlation_id) + body


# --------------------------------------------------------------------------- Heartbeat (key 12)


@dataclass(slots=True)
class HeartbeatRequestView:
    """Heartbeat v0-v4 as kio names its fields; ``group_instance_id`` is None below v3 (kio: absent)."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None


def read_heartbeat_at(data: bytes, start: int, end: int) -> tuple[str | None, str, int, str, str | None] | None:
    """Heartbeat v0-v4 read in place: ``data[start:end]`` is one whole request frame (size prefix excluded)
    among others, so every read is bounded by ``end``, not by ``data``. (client id, group id, generation,
    member id, group instance id), or None for anything the general path must judge. The server's frame
    loop reads pipelined heartbeats with this without copying each frame out first."""
    try:
        version = data[start + 3]  # the caller matched key 12 and a version 0-4 (its high byte is 0)
        if start + 10 > end:
            return None
        client_len = _unpack_i16(data, start + 8)[0]
        pos = start + 10
        client_id: str | None = None
        if client_len >= 0:
            pos += client_len
            if pos > end:
                return None
            client_id = data[start + 10:pos].decode("utf-8")
        elif client_len != -1:
            return None
        if version >= 4:
            if pos >= end or data[pos] != 0:  # header tagged fields: the general path skips them
                return None
            pos += 1
            n = data[pos] - 1 if pos < end else -1
            if n < 0 or n >= 0x7F:
                return None
            group_end = pos + 1 + n
            if group_end + 5 > end:
                return None
            group_id = data[pos + 1:group_end].decode("utf-8")
            generation = _unpack_i32(data, group_end)[0]
            pos = group_end + 4
            n = data[pos] - 1
            if n < 0 or n >= 0x7F:
                return None
            member_end = pos + 1 + n
            if member_end + 2 > end:
                return None
            member_id = data[pos + 1:member_end].decode("utf-8")
            n = data[member_end]
            if n == 0:
                instance = None
                pos = member_end + 1
            else:
                if n >= 0x80:
                    return None
                pos = member_end + n
                if pos + 1 > end:
                    return None
                instance = data[member_end + 1:pos].decode("utf-8")
            if pos >= end or data[pos] != 0:
                return None
            return client_id, group_id, generation, member_id, instance
        if pos + 2 > end:
            return None
        n = _unpack_i16(data, pos)[0]
        group_end = pos + 2 + n
        if n < 0 or group_end + 6 > end:
            return None
        group_id = data[pos + 2:group_end].decode("utf-8")
        generation = _unpack_i32(data, group_end)[0]
        pos = group_end + 4
        n = _unpack_i16(data, pos)[0]
        member_end = pos + 2 + n
        if n < 0 or member_end > end:
            return None
        member_id = data[pos + 2:member_end].decode("utf-8")
        instance = None
        if version >= 3:
            if member_end + 2 > end:
                return None
            n = _unpack_i16(data, member_end)[0]
            if n != -1:
                pos = member_end + 2 + n
                if n < 0 or pos > end:
                    return None
                instance = data[member_end + 2:pos].decode("utf-8")
        return client_id, group_id, generation, member_id, instance
    except (IndexError, struct.error, UnicodeDecodeError):
        return None


HEARTBEAT_MEMBERS_CACHED = 16_384
HEARTBEAT_MEMBER_BYTES = 256


class HeartbeatMembers(dict):
    """A dynamic member's Heartbeat of one version, read once per distinct request. ``read(body)``, where
    ``body`` is the request frame past its correlation id (``frame[8:]``: client id, group id, generation,
    member id, instance id), is ``(group id, generation, member id)`` as ``read_heartbeat_at`` reads them, or
    None where it declines or the member is static (an instance id: the lane leaves those to the handler);
    ``remember(body, member)`` keeps it, and ``get(body)`` is then that read, from memory.

    Why: a member sends the same heartbeat, byte for byte but for the correlation id, every
    ``heartbeat.interval.ms`` for as long as its generation lasts, and reading one (three strings decoded, a
    dozen offsets computed) cost a third of the frame loop's Heartbeat. What is read depends on those bytes
    only, so a remembered read is exactly what the reader would read; and the strings come back with their
    hash already computed, which the group's look-ups then reuse. The lane remembers only the requests it
    answered (members of Stable groups at their generation: what a client cannot make up), at most
    ``HEARTBEAT_MEMBERS_CACHED`` of at most ``HEARTBEAT_MEMBER_BYTES`` each (a few hundred bytes per live
    member; a few MiB at worst), the oldest forgotten first, as the partition cache (hashing.py)."""

    __slots__ = ("_head",)

    def __init__(self, version: int) -> None:
        super().__init__()
        self._head = bytes((0, 12, 0, version, 0, 0, 0, 0))  # api key, version, a correlation id

    def read(self, body: bytes) -> tuple[str, int, str] | None:
        frame = self._head + body
        read = read_heartbeat_at(frame, 0, len(frame))
        if read is None or read[4] is not None:
            return None
        return read[1], read[2], read[3]

    def remember(self, body: bytes, member: tuple[str, int, str]) -> None:
        if len(body) <= HEARTBEAT_MEMBER_BYTES:
            if len(self) >= HEARTBEAT_MEMBERS_CACHED:
                del self[next(iter(self))]
            self[body] = member


def _read_heartbeat(frame: bytes, version: int) -> tuple[str | None, HeartbeatRequestView]:
    read = read_heartbeat_at(frame, 0, len(frame))
    if read is None:
        raise _Unhandled
    client_id, group_id, generation, member_id, instance = read
    return client_id, HeartbeatRequestView(group_id, generation, member_id, instance)


def heartbeat_ok_parts(version: int) -> tuple[bytes, bytes]:
    """A successful Heartbeat answer of ``version`` around its correlation id: (size prefix, header tag
    buffer and body). The frame loop answers with ``prefix + the request's 4 correlation id bytes + tail``."""
    frame = _write_heartbeat(version, 0, {"throttle_time": 0, "error_code": 0})
    assert frame is not None
    return frame[:4], frame[8:]


_heartbeat_tails: dict[tuple[int, int, int], bytes] = {}


def _write_heartbeat(version: int, correlation_id: int, response: Any) -> bytes | None:
    """``{"throttle_time": t, "error_code": e}`` — the only shape a Heartbeat answer has."""
    if type(response) is not dict or len(response) != 2:
        return None
    try:
        key = (version, response["throttle_time"], response["error_code"])
        tail = _heartbeat_tails.get(key)
    except (KeyError, TypeError):
        return None
    if tail is None:
        throttle, error = int(key[1]), int(key[2])
        body = _I16.pack(error) if version == 0 else _I32_I16.pack(throttle, error)
        if version >= 4:
            body = b"\x00" + body + b"\x00"  # response header v1's tag buffer, then the body's
        tail = body
        if len(_heartbeat_tails) < 1024:  # a handful of errors and throttle times in practice
            _heartbeat_tails[key] = tail
    return _FRAME_START.pack(len(tail) + 4, correlation_id) + tail


HEARTBEAT = FastCodec(12, range(0, 5), _guarded(_read_heartbeat), _write_heartbeat)


# --------------------------------------------------------------------------- OffsetCommit (key 8)


@dataclass(slots=True)
class OffsetCommitPartitionView:
    """One partition of an OffsetCommit request, under kio's field names."""
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    committed_metadata: str | None


@dataclass(slots=True)
class OffsetCommitTopicView:
    """One topic of an OffsetCommit request and its partitions, under kio's field names."""
    name: str
    partitions: tuple[OffsetCommitPartitionView, ...]


@dataclass(slots=True)
class OffsetCommitRequestView:
    """OffsetCommit v2-v9 as kio names its fields. Fields a version lacks hold what the handler's
    ``getattr(..., default)`` would give for kio's entity: ``group_instance_id`` None below v7,
    ``retention_time`` None outside v2-v4 (an int of milliseconds inside), ``committed_leader_epoch``
    -1 below v6."""

    group_id: str
    generation_id_or_member_epoch: int
    member_id: str
    group_instance_id: str | None
    retention_time: int | None
    topics: tuple[OffsetCommitTopicView, ...]


def _read_offset_commit(frame: bytes, version: int) -> tuple[str | None, OffsetCommitRequestView]:
    if version >= 8:
        return _read_offset_commit_flexible(frame, version)
    if version < 2:
        raise _Unhandled
    flexible = version >= 8
    client_id, pos = _header(frame, flexible)
    string = _compact_string if flexible else _string
    nullable = _compact_nullable_string if flexible else _nullable_string
    group_id, pos = string(frame, pos)
    generation = _unpack_i32(frame, pos)[0]
    member_id, pos = string(frame, pos + 4)
    instance = None
    if version >= 7:
        instance, pos = nullable(frame, pos)
    retention = None
    if version <= 4:
        retention = _unpack_i64(frame, pos)[0]
        pos += 8
        if not -_PLAIN_RETENTION_MS <= retention <= _PLAIN_RETENTION_MS:
            raise _Unhandled  # kio reads a timedelta and refuses some huge ones: its call
    array = _compact_array_count if flexible else _array_count
    count, pos = array(frame, pos)
    with_epoch = version >= 6
    topics = []
    for _ in range(count):
        name, pos = string(frame, pos)
        n, pos = array(frame, pos)
        partitions = []
        for _ in range(n):
            if with_epoch:
                index, offset, epoch = _I32_I64_I32.unpack_from(frame, pos)
                pos += 16
            else:
                index, offset = _I32_I64.unpack_from(frame, pos)
                epoch = -1
                pos += 12
            metadata, pos = nullable(frame, pos)
            if flexible:
                pos = _no_tags(frame, pos)
            partitions.append(OffsetCommitPartitionView(index, offset, epoch, metadata))
        if flexible:
            pos = _no_tags(frame, pos)
        topics.append(OffsetCommitTopicView(name, tuple(partitions)))
    if flexible:
        _no_tags(frame, pos)
    return client_id, OffsetCommitRequestView(group_id, generation, member_id, instance, retention, tuple(topics))


def _read_offset_commit_flexible(frame: bytes, version: int) -> tuple[str | None, OffsetCommitRequestView]:
    """v8-v9 (what current clients send): the lane's in-place reader over the whole frame, its tuples put into
    views. One reader, so the lane and this path accept and refuse exactly the same frames."""
    read = _offset_commit_flexible_at(frame, 0, len(frame))
    if read is None:
        raise _Unhandled
    client_id, group_id, generation, member_id, instance, topics = read
    return client_id, OffsetCommitRequestView(group_id, generation, member_id, instance, None, tuple(
        OffsetCommitTopicView(name, tuple(OffsetCommitPartitionView(*p) for p in partitions))
        for name, partitions in topics))


def _write_offset_commit(version: int, correlation_id: int, response: Any) -> bytes | None:
    """``{"throttle_time": t, "topics": [{"name", "partitions": [{"partition_index", "error_code"}]}]}``."""
    if type(response) is not dict or len(response) != 2:
        return None
    try:
        topics = response["topics"]
        if version >= 8:
            if len(topics) >= 0x7F:  # counts and lengths past one varint byte: the general encoder
                return None
            # header (size, correlation id, empty tag buffer), throttle time and the topic count, in one pack
            out = bytearray(_FLEXIBLE_START.pack(0, correlation_id, 0, int(response["throttle_time"]), len(topics) + 1))
            names = _compact_names
            pack = _I32_I16_TAG.pack
            for topic in topics:
                if len(topic) != 2:
                    return None
                name = topic["name"]
                partitions = topic["partitions"]
                encoded = names.get(name) if type(name) is str else None
                if encoded is None:
                    raw = name.encode("utf-8")
                    if len(raw) >= 0x7F:
                        return None
                    encoded = bytes((len(raw) + 1,)) + raw
                    if len(names) < 4096:  # the topics a coordinator's clients commit to: few
                        names[name] = encoded
                if len(partitions) >= 0x7F:
                    return None
                out += encoded
                out.append(len(partitions) + 1)
                for p in partitions:
                    if len(p) != 2:
                        return None
                    out += pack(p["partition_index"], p["error_code"], 0)
                out.append(0)
            out.append(0)
            _I32.pack_into(out, 0, len(out) - 4)
            return bytes(out)
        out = bytearray(_I32.pack(int(response["throttle_time"]))) if version >= 3 else bytearray()
        out += _I32.pack(len(topics))
        for topic in topics:
            if len(topic) != 2:
                return None
            raw = topic["name"].encode("utf-8")
            partitions = topic["partitions"]
            out += _I16.pack(len(raw))
            out += raw
            out += _I32.pack(len(partitions))
            for p in partitions:
                if len(p) != 2:
                    return None
                out += _I32_I16.pack(p["partition_index"], p["error_code"])
    except (KeyError, TypeError, AttributeError, struct.error):
        return None
    return _frame(correlation_id, False, bytes(out))


OFFSET_COMMIT = FastCodec(8, range(2, 10), _guarded(_read_offset_commit), _write_offset_commit)


# --------------------------------------------------------------------------- OffsetCommit read in place (the lane)

CommitRead = tuple[str, int, str, "str | None", list[tuple[str, list[tuple[int, int, int, "str | None"]]]]]


def read_offset_commit_at(data: bytes, start: int, end: int) -> CommitRead | None:
    """OffsetCommit v8-v9 read in place: ``data[start:end]`` is one whole request frame (size prefix excluded)
    among others, so every read is bounded by ``end``. (group id, generation or member epoch, member id, group
    instance id, [(topic, [(partition, offset, leader epoch, metadata)])]), or None for anything the general
    path must judge (the client id is read and checked, not returned: nothing on the lane's way uses it)."""
    read = _offset_commit_flexible_at(data, start, end)
    return None if read is None else read[1:]


def _offset_commit_flexible_at(data: bytes, start: int, end: int) -> tuple | None:
    """The one v8-v9 reader, for the lane and for ``_read_offset_commit_flexible``: the client id, then what
    ``read_offset_commit_at`` returns; None where kio might read the frame otherwise (a multi-byte varint, a
    tagged field, bytes that run out, bad UTF-8)."""
    head = _offset_commit_head_at(data, start, end)
    if head is None:
        return None
    topics = _offset_commit_topics_at(data, head[5], end)
    if topics is None:
        return None
    return head[0], head[1], head[2], head[3], head[4], topics


def _offset_commit_head_at(data: bytes, start: int, end: int) -> tuple | None:
    """What precedes the topics: (client id, group id, generation, member id, instance id, where the topics
    start), or None (as ``_offset_commit_flexible_at``). Everything it checks lies before that position."""
    try:
        if start + 10 > end:
            return None
        client_len = _unpack_i16(data, start + 8)[0]
        pos = start + 10
        client_id = None
        if client_len >= 0:
            pos += client_len
            if pos > end:
                return None
            client_id = data[start + 10:pos].decode("utf-8")  # kio refuses a client id that is not UTF-8: so must we
        elif client_len != -1:
            return None
        if pos >= end or data[pos] != 0:  # header tagged fields: the general path skips them
            return None
        pos += 1
        n = data[pos] if pos < end else 0  # group id, compact non-null
        if n == 0 or n >= 0x80:
            return None
        stop = pos + n
        if stop + 4 >= end:
            return None
        group_id = data[pos + 1:stop].decode("utf-8")
        generation = _unpack_i32(data, stop)[0]
        pos = stop + 4
        n = data[pos]  # member id, compact non-null
        if n == 0 or n >= 0x80:
            return None
        stop = pos + n
        if stop >= end:
            return None
        member_id = data[pos + 1:stop].decode("utf-8")
        pos = stop
        n = data[pos]  # group instance id, compact nullable
        if n == 0:
            instance = None
            pos += 1
        else:
            if n >= 0x80:
                return None
            stop = pos + n
            if stop >= end:
                return None
            instance = data[pos + 1:stop].decode("utf-8")
            pos = stop
        return client_id, group_id, generation, member_id, instance, pos
    except (IndexError, struct.error, UnicodeDecodeError):
        return None


def _offset_commit_topics_at(data: bytes, pos: int, end: int) -> list | None:
    """The topics, from the topic count at ``pos`` to the request's end (its tag buffer): [(name, [(partition,
    offset, leader epoch, metadata)])], or None (as ``_offset_commit_flexible_at``)."""
    try:
        if pos >= end:
            return None
        count = data[pos] - 1
        if count < 0 or count >= 0x7F:
            return None
        pos += 1
        unpack = _I32_I64_I32.unpack_from
        topics = []
        for _ in range(count):
            n = data[pos] if pos < end else 0
            if n == 0 or n >= 0x80:
                return None
            stop = pos + n
            if stop >= end:
                return None
            name = data[pos + 1:stop].decode("utf-8")
            pos = stop
            parts = data[pos] - 1
            if parts < 0 or parts >= 0x7F:
                return None
            pos += 1
            partitions = []
            for _ in range(parts):
                if pos + 17 > end:
                    return None
                index, offset, epoch = unpack(data, pos)
                pos += 16
                n = data[pos]
                if n == 0:
                    metadata = None
                    pos += 1
                else:
                    if n >= 0x80:
                        return None
                    stop = pos + n
                    if stop >= end:
                        return None
                    metadata = data[pos + 1:stop].decode("utf-8")
                    pos = stop
                if pos >= end or data[pos] != 0:
                    return None
                pos += 1
                partitions.append((index, offset, epoch, metadata))
            if pos >= end or data[pos] != 0:
                return None
            pos += 1
            topics.append((name, partitions))
        if pos >= end or data[pos] != 0:
            return None
        return topics
    except (IndexError, struct.error, UnicodeDecodeError):
        return None


def lane_memory() -> list:
    """What ``read_offset_commit_lane_at`` remembers between the frames of one lane (one per connection's lane:
    ``[None] * 3`` to start with)."""
    return [None, None, None]


def read_offset_commit_lane_at(data: bytes, start: int, end: int, last: list) -> tuple | None:
    """``read_offset_commit_at``'s read as ((client id, group id, generation, member id, instance id), topics),
    for the lane, which reads its frames through one ``last`` (``lane_memory()``): the bytes before the topics
    of the last frame read, and what they read as; and, for the last frame of one topic and one partition, its
    topics' bytes before the committed offset and after the leader epoch, and what they read as. A frame that
    starts with the same bytes (the next commit of the same consumer: the frames of one read of a socket usually
    come from one) has them read from there, and a commit of the same partition with the same metadata
    (the commonest: only the offset and epoch differ) only those 12 bytes unpacked; being the same bytes at the
    same distance from the frame's end, they read the same, and every check of those parts lies within them
    (``_offset_commit_head_at``, ``_offset_commit_topics_at``)."""
    seen = last[0]
    if seen is not None and data.startswith(seen, start + 8, end):
        head = last[1]
        pos = start + 8 + len(seen)
    else:
        read = _offset_commit_head_at(data, start, end)
        if read is None:
            return None
        pos = read[5]
        last[0] = data[start + 8:pos]
        head = last[1] = read[:5]
    one = last[2]  # (bytes before the offset, after the epoch, both with the 12 between; name, index, metadata)
    if one is not None and end - pos == one[2] and data.startswith(one[0], pos, end) and data.endswith(
            one[1], pos, end):
        offset, epoch = _I64_I32.unpack_from(data, pos + len(one[0]))
        return head, [(one[3], [(one[4], offset, epoch, one[5])])]
    topics = _offset_commit_topics_at(data, pos, end)
    if topics is None:
        return None
    if len(topics) == 1 and len(topics[0][1]) == 1:
        # count, name (a one-byte length n, n - 1 bytes), partition count, index: n + 6 bytes; offset and epoch: 12
        before = pos + data[pos + 1] + 6
        (name, ((index, _, _, metadata),)), = topics
        last[2] = (data[pos:before], data[before + 12:end], end - pos, name, index, metadata)
    return head, topics


def offset_commit_ok_frame(correlation_id: bytes, topics: list[tuple[str, list[tuple[int, int, int, "str | None"]]]]
                           ) -> bytes | None:
    """The successful (every partition NONE) v8-v9 answer to ``topics`` as ``read_offset_commit_at`` gives
    them, around the request's 4 correlation id bytes: what ``_write_offset_commit`` writes for it."""
    if len(topics) == 1 and len(topics[0][1]) == 1:  # the commonest: one partition
        name, ((index, _, _, _),) = topics[0]
        parts = offset_commit_ok_parts(name, index)
        if parts is not None:
            return parts[0] + correlation_id + parts[1]
    frame = _write_offset_commit(8, _unpack_i32(correlation_id, 0)[0], {"throttle_time": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": p[0], "error_code": 0} for p in partitions]}
        for name, partitions in topics]})
    return frame


def offset_commit_ok_parts(name: str, index: int) -> tuple[bytes, bytes] | None:
    """The successful v8-v9 answer to a commit of partition ``index`` of topic ``name`` alone, around its
    correlation id: (size prefix, header tag buffer and body); the answer is ``prefix + the request's 4
    correlation id bytes + tail``, as the lane writes it once the commit is durable. Remembered per partition
    (at most 4096). None until the topic's name has been written once by ``_write_offset_commit`` (which
    knows whether it fits a one-byte length): ``offset_commit_ok_frame`` writes it then."""
    encoded = _compact_names.get(name)
    if encoded is None:
        return None
    parts = _ONE_PARTITION_PARTS.get((encoded, index))
    if parts is None:
        tail = b"\x00\x00\x00\x00\x00\x02" + encoded + b"\x02" + _I32_I16_TAG.pack(index, 0, 0) + b"\x00\x00"
        parts = (_I32.pack(len(tail) + 4), tail)
        if len(_ONE_PARTITION_PARTS) < 4096:
            _ONE_PARTITION_PARTS[(encoded, index)] = parts
    return parts


_ONE_PARTITION_PARTS: dict[tuple[bytes, int], tuple[bytes, bytes]] = {}

# --------------------------------------------------------------------------- shared by JoinGroup and SyncGroup


def _uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint of one to three bytes in its shortest form (anything else: general path)."""
    b = frame[pos]
    if b < 0x80:
        return b, pos + 1
    c = frame[pos + 1]
    if c < 0x80:
        if c == 0:
            raise _Unhandled  # not the shortest form: kio's to judge
        return (b & 0x7F) | (c << 7), pos + 2
    d = frame[pos + 2]
    if d >= 0x80 or d == 0:
        raise _Unhandled
    return (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14), pos + 3


def _compact_count(frame: bytes, pos: int) -> tuple[int, int]:
    """A compact non-null array count."""
    n, pos = _uvarint(frame, pos)
    if n == 0:
        raise _Unhandled
    return n - 1, pos


def _compact_bytes(frame: bytes, pos: int) -> tuple[bytes, int]:
    """Compact non-null bytes."""
    n, pos = _uvarint(frame, pos)
    if n == 0:
        raise _Unhandled
    end = pos + n - 1
    if end > len(frame):
        raise _Unhandled
    return frame[pos:end], end


def _put_uvarint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


_I32_I16_I32 = struct.Struct(">ihi")

_ONE_BYTE = [bytes((n,)) for n in range(0x80)]


def _length(n: int) -> bytes:
    """An unsigned varint's bytes (a compact length: one byte below 128, from a table)."""
    if n < 0x80:
        return _ONE_BYTE[n]
    out = bytearray()
    _put_uvarint(out, n)
    return bytes(out)


TEXTS_KEPT = 4096
"""Short strings whose compact bytes ``_compact_text`` remembers (emptied when full)."""
TEXT_MAX_CHARS = 80
"""Longer strings are encoded every time: the memory stays small (a member id is ~45 characters)."""


def _encode_compact_text(value: str) -> bytes:
    raw = value.encode("utf-8")
    n = len(raw) + 1
    return (_ONE_BYTE[n] if n < 0x80 else _length(n)) + raw


_texts = Memo(_encode_compact_text, TEXTS_KEPT, TEXT_MAX_CHARS)


_compact_text: Callable[[Any], bytes] = _texts.__getitem__
"""A compact non-null string's bytes; a value that is not a str raises (AttributeError: it has no ``encode``;
TypeError: unhashable), and the writer declines. Short ones are remembered: the JoinGroup and SyncGroup answers
of a group repeat the same few strings (the protocol type and name, the leader's and each member's id in its own
answers and the leader's list). The memo's own look-up, no Python function around it: the two writers call it
~27 times per group formed."""


# --------------------------------------------------------------------------- JoinGroup (key 11)


@dataclass(slots=True)
class JoinGroupProtocolView:
    """One protocol a JoinGroup request offers: its name and metadata bytes."""
    name: str
    metadata: bytes


@dataclass(slots=True)
class JoinGroupRequestView:
    """JoinGroup v6-v9 (the flexible versions) as kio names its fields; ``session_timeout`` and
    ``rebalance_timeout`` are ints of milliseconds (kio: timedeltas; the handler reads both with ``as_ms``),
    ``reason`` is None below v8 (kio: absent)."""

    group_id: str
    session_timeout: int
    rebalance_timeout: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: tuple[JoinGroupProtocolView, ...]
    reason: str | None


JoinRead = tuple[str | None, str, int, int, str, "str | None", str, tuple[tuple[str, bytes], ...], "str | None"]


def read_join_group(frame: bytes, version: int) -> JoinRead | None:
    """JoinGroup v6-v9 as plain values: (client id, group id, session timeout, rebalance timeout, member id,
    group instance id, protocol type, ((protocol name, metadata), ...), reason — None below v8), or None for
    anything the general path must judge. The one reader of these versions: the frame loop's lane takes
    these values as they are, and ``JOIN_GROUP.read`` puts them into a view for the handler, so both accept
    and refuse exactly the same frames. ``frame`` is the request frame alone (the lane copies it out of what
    was read: a JoinGroup is small, and one bound, the frame's length, keeps every helper the same)."""
    try:
        return _join_group_fields(frame, version)
    except (_Unhandled, IndexError, struct.error, UnicodeDecodeError):
        return None


def _join_group_fields(frame: bytes, version: int) -> JoinRead:
    """What ``read_join_group`` reads, raising for what it declines. The strings are read inline where their
    length takes one varint byte (every one a client sends in practice; anything longer is declined, as
    ``_compact_string`` declines it): a JoinGroup is read for every member of every rebalance, and a helper
    call per field was half of its reading."""
    size = len(frame)
    client_id, pos = _header(frame, True)
    n = frame[pos]  # group id
    end = pos + n
    if n == 0 or n >= 0x80 or end > size:
        raise _Unhandled
    group_id = frame[pos + 1:end].decode("utf-8")
    session, rebalance = _I32_I32.unpack_from(frame, end)
    pos = end + 8
    n = frame[pos]  # member id
    end = pos + n
    if n == 0 or n >= 0x80 or end > size:
        raise _Unhandled
    member_id = frame[pos + 1:end].decode("utf-8")
    pos = end
    n = frame[pos]  # group instance id, nullable
    if n == 0:
        instance = None
        pos += 1
    else:
        end = pos + n
        if n >= 0x80 or end > size:
            raise _Unhandled
        instance = frame[pos + 1:end].decode("utf-8")
        pos = end
    known = (_JOIN_TAILS_V8 if version >= 8 else _JOIN_TAILS)[frame[pos:]]
    return client_id, group_id, session, rebalance, member_id, instance, *known


JOIN_TAILS_KEPT = 256
"""JoinGroup tails remembered per reading (v8-v9, with a reason; v6-v7): the consumers of a deployment send a
few different ones (the same protocols, the same subscription), so a bound this small still hits."""
JOIN_TAIL_MAX_BYTES = 512
"""A tail longer than this (a large subscription) is read every time, not remembered: the memory stays small."""
_JOIN_TAILS = Memo(lambda tail: _join_group_tail(tail, 7), JOIN_TAILS_KEPT, JOIN_TAIL_MAX_BYTES)  # v6-v7
_JOIN_TAILS_V8 = Memo(lambda tail: _join_group_tail(tail, 8), JOIN_TAILS_KEPT, JOIN_TAIL_MAX_BYTES)  # v8-v9: a reason


def _join_group_tail(tail: bytes, version: int) -> tuple[str, tuple[tuple[str, bytes], ...], str | None]:
    """(protocol type, ((protocol name, metadata), ...), reason — None below v8): what follows the group
    instance id of a JoinGroup, to the end of its frame, raising for what the reader declines. A pure function
    of those bytes and of whether the version has a reason, so ``_join_group_fields`` remembers its answers by
    them (``_JOIN_TAILS``, a ``Memo``): every member of a group sends the same tail, twice per rebalance (the member-id
    round, the join), and reading it was half of reading a JoinGroup. The values are immutable (str, bytes,
    tuples): a remembered answer is handed to every request that sends its bytes."""
    size = len(tail)
    n = tail[0]  # protocol type
    end = n
    if n == 0 or n >= 0x80 or end > size:
        raise _Unhandled
    protocol_type = tail[1:end].decode("utf-8")
    count, pos = _compact_count(tail, end)
    protocols = []
    for _ in range(count):
        n = tail[pos]  # protocol name
        end = pos + n
        if n == 0 or n >= 0x80 or end > size:
            raise _Unhandled
        name = tail[pos + 1:end].decode("utf-8")
        metadata, pos = _compact_bytes(tail, end)
        if tail[pos] != 0:  # the protocol's tagged fields
            raise _Unhandled
        pos += 1
        protocols.append((name, metadata))
    reason = None
    if version >= 8:
        reason, pos = _compact_nullable_string(tail, pos)
    _no_tags(tail, pos)
    return protocol_type, tuple(protocols), reason


def _read_join_group(frame: bytes, version: int) -> tuple[str | None, JoinGroupRequestView]:
    client_id, group_id, session, rebalance, member_id, instance, protocol_type, protocols, reason = (
        _join_group_fields(frame, version))
    return client_id, JoinGroupRequestView(group_id, session, rebalance, member_id, instance, protocol_type,
                                           tuple([JoinGroupProtocolView(n, m) for n, m in protocols]), reason)


_JOIN_KEYS = frozenset(("throttle_time", "error_code", "generation_id", "protocol_type", "protocol_name", "leader",
                        "skip_assignment", "member_id", "members"))


def _write_join_group(version: int, correlation_id: int, response: Any) -> bytes | None:
    """The coordinator's JoinGroup answer (classic/responses.py: its nine keys, every one always there).
    Declines what a version cannot carry as given (a null protocol name before v7, skip_assignment before
    v9, a protocol type before v7) rather than guess what the general encoder would make of it. Written as
    a list of parts joined once (``_compact_text`` per string), not appended field by field to a bytearray:
    it answers every JoinGroup, and the leader's lists every member."""
    if type(response) is not dict or response.keys() != _JOIN_KEYS:
        return None
    try:
        protocol_type = response["protocol_type"]
        protocol_name = response["protocol_name"]
        if version < 7 and (protocol_name is None or protocol_type is not None):
            return None
        if version < 9 and response["skip_assignment"]:
            return None
        head = _I32_I16_I32.pack(int(response["throttle_time"]), int(response["error_code"]),
                                 int(response["generation_id"]))
        if version >= 7:
            names = ((b"\x00" if protocol_type is None else _compact_text(protocol_type))
                     + (b"\x00" if protocol_name is None else _compact_text(protocol_name)))
        else:
            names = _compact_text(protocol_name)
        leader = _compact_text(response["leader"])
        if version >= 9:
            skip = response["skip_assignment"]
            if type(skip) is not bool:
                return None
            leader += b"\x01" if skip else b"\x00"
        member_id = _compact_text(response["member_id"])
        members = response["members"]
        count = len(members)
        if count == 0:  # every answer but the leader's: one join, no list to walk
            body = b"".join((b"\x00", head, names, leader, member_id, b"\x01\x00"))
            return _FRAME_START.pack(len(body) + 4, correlation_id) + body
        parts = [b"\x00", head, names, leader, member_id, _length(count + 1)]
        for m in members:
            if type(m) is not dict or len(m) != 3:
                return None
            instance = m["group_instance_id"]
            metadata = m["metadata"]
            if type(metadata) is not bytes:
                raise TypeError
            parts += (_compact_text(m["member_id"]), b"\x00" if instance is None else _compact_text(instance),
                      _length(len(metadata) + 1), metadata, b"\x00")
        parts.append(b"\x00")
        body = b"".join(parts)
        return _FRAME_START.pack(len(body) + 4, correlation_id) + body
    except (KeyError, TypeError, AttributeError, ValueError, struct.error):
        return None


JOIN_GROUP = FastCodec(11, range(6, 10), _guarded(_read_join_group), _write_join_group)


# --------------------------------------------------------------------------- SyncGroup (key 14)


@dataclass(slots=True)
class SyncGroupAssignmentView:
    """One member's assignment in a leader's SyncGroup request."""
    member_id: str
    assignment: bytes


@dataclass(slots=True)
class SyncGroupRequestView:
    """SyncGroup v4-v5 (the flexible versions) as kio names its fields; ``protocol_type`` and
    ``protocol_name`` are None in v4 (kio: absent)."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: tuple[SyncGroupAssignmentView, ...]


SyncRead = tuple[str | None, str, int, str, "str | None", "str | None", "str | None", tuple[tuple[str, bytes], ...]]


def read_sync_group(frame: bytes, version: int) -> SyncRead | None:
    """SyncGroup v4-v5 as plain values: (client id, group id, generation, member id, group instance id,
    protocol type, protocol name — both None in v4, ((member id, assignment), ...)), or None for anything the
    general path must judge. The one reader of these versions, for the lane and ``SYNC_GROUP.read`` alike
    (see ``read_join_group``)."""
    try:
        return _sync_group_fields(frame, version)
    except (_Unhandled, IndexError, struct.error, UnicodeDecodeError):
        return None


def _sync_group_fields(frame: bytes, version: int) -> SyncRead:
    """What ``read_sync_group`` reads, raising for what it declines; the member ids read inline, as
    ``_join_group_fields`` reads its strings (the leader's SyncGroup names every member)."""
    size = len(frame)
    client_id, pos = _header(frame, True)
    n = frame[pos]  # group id
    end = pos + n
    if n == 0 or n >= 0x80 or end > size:
        raise _Unhandled
    group_id = frame[pos + 1:end].decode("utf-8")
    generation = _unpack_i32(frame, end)[0]
    pos = end + 4
    n = frame[pos]  # member id
    end = pos + n
    if n == 0 or n >= 0x80 or end > size:
        raise _Unhandled
    member_id = frame[pos + 1:end].decode("utf-8")
    # (a leader's tail, naming the members, is longer than SYNC_TAIL_MAX_BYTES: read, not remembered)
    known = (_SYNC_TAILS_V5 if version >= 5 else _SYNC_TAILS)[frame[end:]]
    return client_id, group_id, generation, member_id, *known


SYNC_TAILS_KEPT = 256
"""SyncGroup tails remembered per reading (v5, with protocol type and name; v4)."""
SYNC_TAIL_MAX_BYTES = 64
"""Only short tails are remembered: a follower's (no assignments) is the same for every member of every group
of an application; a leader's names member ids and is nearly always unique."""
_SYNC_TAILS = Memo(lambda tail: _sync_group_tail(tail, 4), SYNC_TAILS_KEPT, SYNC_TAIL_MAX_BYTES)  # v4
_SYNC_TAILS_V5 = Memo(lambda tail: _sync_group_tail(tail, 5), SYNC_TAILS_KEPT, SYNC_TAIL_MAX_BYTES)  # v5: protocol fields


def _sync_group_tail(tail: bytes, version: int) -> tuple[str | None, str | None, str | None, tuple[tuple[str, bytes], ...]]:
    """(group instance id, protocol type, protocol name — both None in v4, ((member id, assignment), ...)):
    what follows the member id of a SyncGroup, to the end of its frame, raising for what the reader declines;
    a pure function of those bytes and of the version's having the protocol fields (see ``_join_group_tail``)."""
    size = len(tail)
    instance, pos = _compact_nullable_string(tail, 0)
    protocol_type = protocol_name = None
    if version >= 5:
        protocol_type, pos = _compact_nullable_string(tail, pos)
        protocol_name, pos = _compact_nullable_string(tail, pos)
    count, pos = _compact_count(tail, pos)
    assignments = []
    for _ in range(count):
        n = tail[pos]  # the member's id
        end = pos + n
        if n == 0 or n >= 0x80 or end > size:
            raise _Unhandled
        member = tail[pos + 1:end].decode("utf-8")
        assignment, pos = _compact_bytes(tail, end)
        if tail[pos] != 0:  # the assignment's tagged fields
            raise _Unhandled
        pos += 1
        assignments.append((member, assignment))
    _no_tags(tail, pos)
    return instance, protocol_type, protocol_name, tuple(assignments)


def _read_sync_group(frame: bytes, version: int) -> tuple[str | None, SyncGroupRequestView]:
    client_id, group_id, generation, member_id, instance, protocol_type, protocol_name, assignments = (
        _sync_group_fields(frame, version))
    return client_id, SyncGroupRequestView(group_id, generation, member_id, instance, protocol_type, protocol_name,
                                           tuple([SyncGroupAssignmentView(m, a) for m, a in assignments]))


_SYNC_KEYS = frozenset(("throttle_time", "error_code", "protocol_type", "protocol_name", "assignment"))


def _write_sync_group(version: int, correlation_id: int, response: Any) -> bytes | None:
    """The coordinator's SyncGroup answer (classic/responses.py: its five keys). v4 has no protocol type or
    name: one given there is declined (the general encoder's call)."""
    if type(response) is not dict or response.keys() != _SYNC_KEYS:
        return None
    try:
        protocol_type = response["protocol_type"]
        protocol_name = response["protocol_name"]
        if version < 5 and (protocol_type is not None or protocol_name is not None):
            return None
        assignment = response["assignment"]
        if type(assignment) is not bytes:
            return None
        head = _I32_I16.pack(int(response["throttle_time"]), int(response["error_code"]))
        if version >= 5:  # (parts joined once, as _write_join_group writes)
            head += ((b"\x00" if protocol_type is None else _compact_text(protocol_type))
                     + (b"\x00" if protocol_name is None else _compact_text(protocol_name)))
        body = b"".join((b"\x00", head, _length(len(assignment) + 1), assignment, b"\x00"))
        return _FRAME_START.pack(len(body) + 4, correlation_id) + body
    except (KeyError, TypeError, AttributeError, ValueError, struct.error):
        return None


SYNC_GROUP = FastCodec(14, range(4, 6), _guarded(_read_sync_group), _write_sync_group)
