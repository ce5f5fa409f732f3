"""Very large requests read a slice at a time (issue 17: one request must not stall every client).

OffsetCommit (a million partitions) and JoinGroup (a hundred thousand protocols) are the requests whose
size grows with a client's claim.

kio's reader (and the bounds walk before it) turns a million-partition OffsetCommit (18 MB) into a million
Python objects in one call that the event loop cannot interrupt, and the answer is encoded in one call too.
Here the body is walked with plain slicing: ``OffsetCommitSlices`` reads the request's fixed fields, then
yields its partitions ``slice_size`` at a time, so the caller can hand the loop
back between slices and keep only one slice alive at once. Every count and length is checked against the
bytes that are there before anything is sized from it, tagged fields are skipped as kio skips them, and any
malformed input raises ``ProtocolError``. ``OffsetCommitAnswer`` writes the response body (every version
v2-v9, byte for byte what kio's writer produces) as the answers of each slice arrive.
"""

from __future__ import annotations

import struct
from typing import Iterator

Entry = tuple[int, int, int, 'str | None']
"""One partition: partition_index, committed_offset, committed_leader_epoch (-1 below v6), committed_metadata."""

from groupcoord.protocol.frozen import frozen_dataclass

from .errors import ProtocolError
from .varint import decode_unsigned_varint, write_unsigned_varint

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_PART_V6 = struct.Struct(">iqi")  # partition_index, committed_offset, committed_leader_epoch
_PART_V2 = struct.Struct(">iq")  # partition_index, committed_offset
_ANSWER = struct.Struct(">ih")  # partition_index, error_code

FLEXIBLE_VERSION = 8
LEADER_EPOCH_VERSION = 6
INSTANCE_ID_VERSION = 7
RETENTION_VERSIONS = range(2, 5)
THROTTLE_VERSION = 3


@frozen_dataclass
class CommitHead:
    """The fields before the topics array (``retention_time_ms`` -1 where the version has none)."""

    group_id: str
    generation_id_or_member_epoch: int
    member_id: str
    group_instance_id: str | None
    retention_time_ms: int


class BodyReader:
    """The primitives, each checking the bytes are there before a length is used."""

    frame: bytes
    flexible: bool

    def _need(self, pos: int, n: int) -> None:
        if n < 0 or pos + n > len(self.frame):
            raise ProtocolError("request runs past the end of its frame")

    def _uvarint(self, pos: int) -> tuple[int, int]:
        return decode_unsigned_varint(self.frame, pos, 5)

    def _string(self, pos: int, nullable: bool) -> tuple[str | None, int]:
        frame = self.frame
        if self.flexible:
            n, pos = self._uvarint(pos)
            n -= 1
        else:
            self._need(pos, 2)
            n = _I16.unpack_from(frame, pos)[0]
            pos += 2
        if n < 0:
            if n == -1 and nullable:
                return None, pos
            raise ProtocolError("null or negative string length")
        self._need(pos, n)
        try:
            return frame[pos:pos + n].decode("utf-8"), pos + n
        except UnicodeDecodeError as exc:
            raise ProtocolError("string is not UTF-8") from exc

    def _length(self, pos: int) -> tuple[int, int]:
        """An array count or a bytes length as written: a compact (unsigned varint, plus one) length in flexible
        versions, an int32 before; -1 is null. The caller refuses what it cannot take."""
        if self.flexible:
            n, pos = self._uvarint(pos)
            return n - 1, pos
        self._need(pos, 4)
        return _I32.unpack_from(self.frame, pos)[0], pos + 4

    def _count(self, pos: int, min_entry: int) -> tuple[int, int]:
        """An array count, refused when its entries (``min_entry`` bytes at least each) cannot be there."""
        n, pos = self._length(pos)
        if n < 0:
            raise ProtocolError("null or negative array count")
        if n * min_entry > len(self.frame) - pos:
            raise ProtocolError(f"array count {n} exceeds the bytes of its frame")
        return n, pos

    def _skip_tags(self, pos: int) -> int:
        count, pos = self._uvarint(pos)
        for _ in range(count):
            _tag, pos = self._uvarint(pos)
            size, pos = self._uvarint(pos)
            self._need(pos, size)
            pos += size
        return pos

    def _bytes(self, pos: int) -> tuple[bytes, int]:
        """Non-null bytes (compact in flexible versions)."""
        n, pos = self._length(pos)
        if n < 0:
            raise ProtocolError("null or negative bytes length")
        self._need(pos, n)
        return self.frame[pos:pos + n], pos + n

    def _int32(self, pos: int) -> tuple[int, int]:
        self._need(pos, 4)
        return _I32.unpack_from(self.frame, pos)[0], pos + 4


class OffsetCommitSlices(BodyReader):
    """The body of one OffsetCommit request (``frame[body_offset:]``), read lazily."""

    def __init__(self, frame: bytes, body_offset: int, version: int) -> None:
        if not 2 <= version <= 9:
            raise ProtocolError(f"OffsetCommit v{version} is not read here")
        self.frame = frame
        self.version = version
        self.flexible = version >= FLEXIBLE_VERSION
        self._pos = body_offset
        self.head = self._read_head()
        self.topic_count, self._topics_at = self._count(self._pos, 3 if self.flexible else 6)

    def _read_head(self) -> CommitHead:
        pos = self._pos
        group_id, pos = self._string(pos, False)
        self._need(pos, 4)
        generation = _I32.unpack_from(self.frame, pos)[0]
        member_id, pos = self._string(pos + 4, False)
        instance = None
        if self.version >= INSTANCE_ID_VERSION:
            instance, pos = self._string(pos, True)
        retention = -1
        if self.version in RETENTION_VERSIONS:
            self._need(pos, 8)
            retention = _I64.unpack_from(self.frame, pos)[0]
            pos += 8
        self._pos = pos
        assert group_id is not None and member_id is not None
        return CommitHead(group_id, generation, member_id, instance, retention)

    def slices(self, slice_size: int, build: bool = True) -> Iterator[tuple[int, str, int, list[Entry]]]:
        """``(topic's position, topic, its partition count, up to slice_size of its partitions)`` in request
        order, a topic with no partitions as one empty slice. ``build=False`` only checks the bytes (the
        slices come empty, as often). ProtocolError on anything malformed, when it is reached."""
        try:
            yield from self._slices(slice_size, build)
        except (IndexError, struct.error, UnicodeDecodeError) as exc:
            raise ProtocolError(f"malformed OffsetCommit request: {exc}") from exc

    def _slices(self, slice_size: int, build: bool) -> Iterator[tuple[int, str, int, list[Entry]]]:
        frame, flexible = self.frame, self.flexible
        fixed = _PART_V6 if self.version >= LEADER_EPOCH_VERSION else _PART_V2
        fixed_size = fixed.size
        unpack = fixed.unpack_from
        with_epoch = fixed_size == _PART_V6.size
        min_partition = fixed_size + 2  # the fixed fields, the metadata's length, (flexible) its tag count
        pos = self._topics_at
        for position in range(self.topic_count):
            name, pos = self._string(pos, False)
            assert name is not None
            count, pos = self._count(pos, min_partition)
            out: list[Entry] = []
            taken = 0
            emitted = False
            for _ in range(count):
                values = unpack(frame, pos)  # struct.error when the bytes are not there
                pos += fixed_size
                size = frame[pos]
                if flexible and 0 < size < 0x80 and frame[pos + size] == 0:  # the common case, inline:
                    end = pos + size  # a short compact string and no tagged fields
                    metadata: str | None = frame[pos + 1:end].decode("utf-8")
                    pos = end + 1
                else:
                    metadata, pos = self._string(pos, True)
                    if flexible:
                        pos = self._skip_tags(pos)
                if build:
                    out.append((values[0], values[1], values[2] if with_epoch else -1, metadata))
                taken += 1
                if taken >= slice_size:
                    yield position, name, count, out
                    emitted = True
                    out, taken = [], 0
            if flexible:
                pos = self._skip_tags(pos)
            if taken or not emitted:
                yield position, name, count, out
        if flexible:
            self._skip_tags(pos)
        # Bytes after the body are ignored, as kio's reader (the ordinary path) and Kafka's parser ignore them.


class OffsetCommitAnswer:
    """The response body, written as the answers come: ``topic(name, count)`` before a topic's partitions,
    ``partition(index, error)`` for each, ``body()`` at the end."""

    def __init__(self, version: int, topics: int, throttle_time_ms: int = 0) -> None:
        self.version = version
        self.flexible = version >= FLEXIBLE_VERSION
        self.out = bytearray()
        if version >= THROTTLE_VERSION:
            self.out += _I32.pack(throttle_time_ms)
        self._count(topics)
        self._open_topic = False

    def _count(self, n: int) -> None:
        if self.flexible:
            write_unsigned_varint(self.out, n + 1)
        else:
            self.out += _I32.pack(n)

    def topic(self, name: str, partitions: int) -> None:
        self._close_topic()
        raw = name.encode("utf-8")
        if self.flexible:
            write_unsigned_varint(self.out, len(raw) + 1)
        else:
            self.out += _I16.pack(len(raw))
        self.out += raw
        self._count(partitions)
        self._open_topic = True

    def partitions(self, answers: list[tuple[int, int]]) -> None:
        out, pack = self.out, _ANSWER.pack
        if self.flexible:
            for index, error in answers:
                out += pack(index, error)
                out.append(0)
        else:
            for index, error in answers:
                out += pack(index, error)

    def _close_topic(self) -> None:
        if self._open_topic and self.flexible:
            self.out.append(0)
        self._open_topic = False

    def body(self) -> bytes:
        self._close_topic()
        if self.flexible:
            self.out.append(0)
        return bytes(self.out)


JOIN_FLEXIBLE_VERSION = 6


class JoinGroupSlices(BodyReader):
    """The body of one JoinGroup request (v0-v9): its fields, and its protocols ``slice_size`` at a time as
    ``(name, metadata)``; ``reason`` is read once the protocols have been."""

    def __init__(self, frame: bytes, body_offset: int, version: int) -> None:
        if not 0 <= version <= 9:
            raise ProtocolError(f"JoinGroup v{version} is not read here")
        self.frame = frame
        self.version = version
        self.flexible = version >= JOIN_FLEXIBLE_VERSION
        group_id, pos = self._string(body_offset, False)
        self.session_timeout_ms, pos = self._int32(pos)
        self.rebalance_timeout_ms = -1
        if version >= 1:
            self.rebalance_timeout_ms, pos = self._int32(pos)
        member_id, pos = self._string(pos, False)
        self.group_instance_id = None
        if version >= 5:
            self.group_instance_id, pos = self._string(pos, True)
        protocol_type, pos = self._string(pos, False)
        assert group_id is not None and member_id is not None and protocol_type is not None
        self.group_id, self.member_id, self.protocol_type = group_id, member_id, protocol_type
        self.protocol_count, self._protocols_at = self._count(pos, 3 if self.flexible else 6)
        self.reason: str | None = None

    def protocols(self, slice_size: int) -> Iterator[list[tuple[str, bytes]]]:
        try:
            yield from self._protocols(slice_size)
        except (IndexError, struct.error, UnicodeDecodeError) as exc:
            raise ProtocolError(f"malformed JoinGroup request: {exc}") from exc

    def _protocols(self, slice_size: int) -> Iterator[list[tuple[str, bytes]]]:
        pos = self._protocols_at
        out: list[tuple[str, bytes]] = []
        for _ in range(self.protocol_count):
            name, pos = self._string(pos, False)
            metadata, pos = self._bytes(pos)
            if self.flexible:
                pos = self._skip_tags(pos)
            out.append((name, metadata))  # type: ignore[arg-type]
            if len(out) >= slice_size:
                yield out
                out = []
        if self.version >= 8:
            self.reason, pos = self._string(pos, True)
        if self.flexible:
            self._skip_tags(pos)
        if out:
            yield out
