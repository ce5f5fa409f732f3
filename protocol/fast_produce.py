"""The Produce request read and its answer written by hand, v3-v11 (flexible from v9), as fast_codecs.py does
for the group APIs.

Why: a Produce is the broker's commonest request (franz-go's TestGroupETL: v11, ~13 partitions of one small
batch each), and the general way read it through kio's bounds check and native reader into entities that the
handler then copied into the dataplane's ``TopicData``/``PartitionData``, and wrote the answer dict through the
schema-driven encoder, a plan step per field of every partition (``encode_body`` alone was ~4-5 % of the
daemon's time in that run). Here the request is read straight from the frame into the dataplane's own objects
(the caller gives their classes: the protocol package does not import the coordinator's), each partition's
records a ``bytes`` slice of the frame (one copy, as before), and the answer is packed a partition at a time.

kio stays the source of truth: tests/protocol/test_fast_produce.py checks both against kio over generated values
in every version. Whatever the reader does not take exactly as kio would (a tagged field, a null array, a
varint not in its shortest form, bad UTF-8, bytes that run out) makes it decline, and the general path judges
the frame, so malformed input is answered (or the connection closed) as before. The writer declines any answer
not shaped as the produce service and handler make them (another key, a tagged field set, a value of another
type), and the general encoder writes that one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable

from groupcoord.protocol.fast_codecs import FastCodec, _header, _length, _Unhandled
from groupcoord.protocol.frozen import builder
from groupcoord.protocol.values import as_epoch_ms, as_ms

PRODUCE_KEY = 0
FIRST_FLEXIBLE = 9
VERSIONS = range(3, 12)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_unpack_i16 = _I16.unpack_from
_unpack_i32 = _I32.unpack_from
_FRAME_START = struct.Struct(">ii")  # size prefix, correlation id

# A partition's answer, by version: index, error, base offset[, log append time (v2+)][, log start offset (v5+)]
_V3 = struct.Struct(">ihqq")
_V5 = struct.Struct(">ihqqq")
_V8_EMPTY = struct.Struct(">ihqqqih")  # ... then no record errors (int32 0) and a null message (int16 -1)
_V9_EMPTY = struct.Struct(">ihqqqBBB")  # ... then no record errors (1), a null message (0), no tagged fields (0)

PARTITION_KEYS = 7
"""``index, error_code, base_offset, log_append_time, log_start_offset, record_errors, error_message``: every
partition answer the produce service and the handler make has exactly these; any other shape is declined."""

NAMES_KEPT = 4096
"""Topic names whose encoded bytes the writer remembers (a broker's producers write to few topics)."""


@dataclass(slots=True)
class ProduceRequestView:
    """A Produce request as the handler needs it: ``topics`` already the dataplane's ``TopicData`` objects (in
    request order), ``acks`` and ``transactional_id`` as kio reads them."""

    transactional_id: str | None
    acks: int
    topics: list[Any]


def _uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint of up to four bytes (a length below 256 MiB) in its shortest form; anything else is
    the general path's to judge."""
    b = frame[pos]
    if b < 0x80:
        return b, pos + 1
    value = b & 0x7F
    shift = 7
    for i in range(pos + 1, pos + 4):
        b = frame[i]
        if b < 0x80:
            if b == 0:
                raise _Unhandled  # not the shortest form
            return value | (b << shift), i + 1
        value |= (b & 0x7F) << shift
        shift += 7
    raise _Unhandled


DataClasses = Callable[[], "tuple[Callable[..., Any], Callable[..., Any]]"]


def produce_reader(data_classes: DataClasses) -> Callable[..., Any]:
    """``read(frame, version) -> (client_id, ProduceRequestView) | None``, building each topic as
    ``topic_data(name, partitions)`` and each partition as ``partition_data(index, records)``, where
    ``data_classes()`` is ``(topic_data, partition_data)``: asked at the first read, so that the module defining
    them is imported by the first Produce, not when the codec is bound (at start-up)."""
    topic_data: Any = None  # both set by the first read
    partition_data: Any = None

    def read_classic(frame: bytes) -> tuple[str | None, ProduceRequestView]:
        client_id, pos = _header(frame, False)
        size = len(frame)
        n = _unpack_i16(frame, pos)[0]
        pos += 2
        if n == -1:
            transactional_id = None
        else:
            end = pos + n
            if n < 0 or end > size:
                raise _Unhandled
            transactional_id = frame[pos:end].decode("utf-8")
            pos = end
        acks = _unpack_i16(frame, pos)[0]  # then the timeout, an int32 nothing here uses
        count = _unpack_i32(frame, pos + 6)[0]
        pos += 10
        if count < 0:
            raise _Unhandled
        topics = []
        for _ in range(count):
            n = _unpack_i16(frame, pos)[0]
            end = pos + 2 + n
            if n < 0 or end > size:
                raise _Unhandled
            name = frame[pos + 2:end].decode("utf-8")
            n = _unpack_i32(frame, end)[0]
            pos = end + 4
            if n < 0:
                raise _Unhandled
            partitions = []
            for _ in range(n):
                index = _unpack_i32(frame, pos)[0]
                length = _unpack_i32(frame, pos + 4)[0]
                pos += 8
                if length == -1:
                    records = None
                else:
                    end = pos + length
                    if length < 0 or end > size:
                        raise _Unhandled
                    records = frame[pos:end]
                    pos = end
                partitions.append(partition_data(index, records))
            topics.append(topic_data(name, tuple(partitions)))
        return client_id, ProduceRequestView(transactional_id, acks, topics)

    def read_flexible(frame: bytes) -> tuple[str | None, ProduceRequestView]:
        client_id, pos = _header(frame, True)
        size = len(frame)
        n = frame[pos]
        if n == 0:
            transactional_id = None
            pos += 1
        else:
            n, pos = _uvarint(frame, pos)
            end = pos + n - 1
            if end > size:
                raise _Unhandled
            transactional_id = frame[pos:end].decode("utf-8")
            pos = end
        acks = _unpack_i16(frame, pos)[0]  # then the timeout, an int32 nothing here uses
        pos += 6
        count = frame[pos] - 1
        if count < 0x7F:
            pos += 1
        else:
            count, pos = _uvarint(frame, pos)
            count -= 1
        if count < 0:  # a null array: the general path refuses it
            raise _Unhandled
        topics = []
        for _ in range(count):
            n = frame[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = _uvarint(frame, pos)
            end = pos + n - 1
            if n == 0 or end > size:
                raise _Unhandled
            name = frame[pos:end].decode("utf-8")
            n = frame[end] - 1
            if n < 0x7F:
                pos = end + 1
            else:
                n, pos = _uvarint(frame, end)
                n -= 1
            if n < 0:
                raise _Unhandled
            partitions = []
            for _ in range(n):
                index = _unpack_i32(frame, pos)[0]
                length = frame[pos + 4]  # the records' compact length: one or two varint bytes inline (a batch
                if length < 0x80:        # of a few hundred bytes), longer ones through _uvarint
                    pos += 5
                else:
                    high = frame[pos + 5]
                    if 0 < high < 0x80:
                        length = (length & 0x7F) | (high << 7)
                        pos += 6
                    else:
                        length, pos = _uvarint(frame, pos + 4)
                if length == 0:
                    records = None
                else:
                    end = pos + length - 1
                    if end > size:
                        raise _Unhandled
                    records = frame[pos:end]
                    pos = end
                if frame[pos] != 0:  # the partition's tagged fields
                    raise _Unhandled
                pos += 1
                partitions.append(partition_data(index, records))
            if frame[pos] != 0:  # the topic's
                raise _Unhandled
            pos += 1
            topics.append(topic_data(name, tuple(partitions)))
        if frame[pos] != 0:  # the request's
            raise _Unhandled
        return client_id, ProduceRequestView(transactional_id, acks, topics)

    def read(frame: bytes, version: int) -> tuple[str | None, ProduceRequestView] | None:
        nonlocal topic_data, partition_data
        if topic_data is None:
            classes = data_classes()
            topic_data, partition_data = builder(classes[0]), builder(classes[1])
        if type(frame) is not bytes:  # a view of a larger buffer: its slices would not be the bytes the log keeps
            return None
        try:
            return read_flexible(frame) if version >= FIRST_FLEXIBLE else read_classic(frame)
        except (_Unhandled, IndexError, struct.error, UnicodeDecodeError):
            return None

    return read


# --------------------------------------------------------------------------- the answer

_names: dict[tuple[str, bool], bytes] = {}


def _name_bytes(name: Any, flexible: bool) -> bytes:
    """A topic name's string bytes (its length, int16 or compact, then UTF-8), remembered."""
    encoded = _names.get((name, flexible))
    if encoded is None:
        raw = name.encode("utf-8")  # not a str: AttributeError, and the writer declines
        encoded = _length(len(raw) + 1) + raw if flexible else _I16.pack(len(raw)) + raw
        if len(_names) < NAMES_KEPT:
            _names[(name, flexible)] = encoded
    return encoded


def _nullable_string(out: bytearray, value: Any, flexible: bool) -> None:
    if value is None:
        out += b"\x00" if flexible else b"\xff\xff"
        return
    raw = value.encode("utf-8")
    if flexible:
        out += _length(len(raw) + 1)
    else:
        out += _I16.pack(len(raw))
    out += raw


def _record_errors(out: bytearray, errors: Any, flexible: bool) -> None:
    out += _length(len(errors) + 1) if flexible else _I32.pack(len(errors))
    for error in errors:
        if type(error) is not dict or len(error) != 2:
            raise _Unhandled
        out += _I32.pack(error["batch_index"])
        _nullable_string(out, error["batch_index_error_message"], flexible)
        if flexible:
            out.append(0)


def write_produce(version: int, correlation_id: int, response: Any) -> bytes | None:
    """``{"responses": [{"name", "partition_responses": [{the seven PARTITION_KEYS}]}], "throttle_time": t}``,
    the size-prefixed answer frame; None for anything else (the general encoder's)."""
    if type(response) is not dict or len(response) != 2:
        return None
    try:
        return _write(version, correlation_id, response["responses"], response["throttle_time"])
    except (_Unhandled, KeyError, TypeError, AttributeError, ValueError, struct.error):
        return None


def _write(version: int, correlation_id: int, topics: Any, throttle: Any) -> bytes:
    flexible = version >= FIRST_FLEXIBLE
    out = bytearray(_FRAME_START.pack(0, correlation_id))
    if flexible:
        out.append(0)  # response header v1's tagged fields
        out += _length(len(topics) + 1)
    else:
        out += _I32.pack(len(topics))
    for topic in topics:
        if type(topic) is not dict or len(topic) != 2:
            raise _Unhandled
        partitions = topic["partition_responses"]
        out += _name_bytes(topic["name"], flexible)
        out += _length(len(partitions) + 1) if flexible else _I32.pack(len(partitions))
        for p in partitions:
            if type(p) is not dict or len(p) != PARTITION_KEYS:
                raise _Unhandled
            append_time = p["log_append_time"]
            if type(append_time) is not int:
                append_time = as_epoch_ms(append_time)
            if version < 5:
                out += _V3.pack(p["index"], p["error_code"], p["base_offset"], append_time)
                continue
            head = (p["index"], p["error_code"], p["base_offset"], append_time, p["log_start_offset"])
            if version < 8:
                out += _V5.pack(*head)
                continue
            errors, message = p["record_errors"], p["error_message"]
            if type(errors) is not list and type(errors) is not tuple:
                raise _Unhandled
            if not errors and message is None:
                out += (_V9_EMPTY.pack(*head, 1, 0, 0) if flexible else _V8_EMPTY.pack(*head, 0, -1))
                continue
            out += _V5.pack(*head)
            _record_errors(out, errors, flexible)
            _nullable_string(out, message, flexible)
            if flexible:
                out.append(0)  # the partition's tagged fields: no current leader
        if flexible:
            out.append(0)
    out += _I32.pack(throttle if type(throttle) is int else as_ms(throttle))
    if flexible:
        out.append(0)  # the answer's tagged fields: no node endpoints
    _I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def produce_codec(data_classes: DataClasses) -> FastCodec:
    """Produce's fast codec, its requests read into the objects of the classes ``data_classes()`` gives
    (``(topic_data, partition_data)``, asked at the first read)."""
    return FastCodec(PRODUCE_KEY, VERSIONS, produce_reader(data_classes), write_produce)
