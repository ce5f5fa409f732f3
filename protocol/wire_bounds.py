"""Bounds check of a kio entity's wire bytes before kio's native reader sees them.

Why this exists: kio's native (Rust) reader sizes every array from the count on the wire before it
reads an element (``Vec::with_capacity(count)``). A FindCoordinator v4 of 32 bytes whose key array
claims two billion entries made it ask the allocator for 100 GB, and a failed allocation in Rust aborts
the process: every client of the broker lost it. Strings and bytes are safe (kio compares their length
with the buffer and raises), arrays are not — at any depth, in tagged fields too.

So every client-supplied entity is walked here first, driven by the same kio field metadata kio reads
with (through kio's own introspection helpers, as ``protocol/encode.py`` does): each array count is
checked against the bytes left (each element takes at least its minimum encoded size), each length and
tagged-field size against the end of its buffer, and an array sent as null where the version does not
allow null is refused, as Kafka's generated readers refuse it (the handlers need not guard against it).
Nothing is built; a frame that lies raises ``WireBoundsError`` and its connection is closed.

It is on every request's path, so it is compiled: per kio class, straight-line Python source is
generated once (runs of fixed-size fields become one addition, one-byte varints are read inline) and
the walk of the top-level entity stops after the last field that can hold an array — an entity without
arrays (Heartbeat) costs nothing at all.
"""

from __future__ import annotations

import dataclasses
import struct
from functools import cache
from typing import Any, Callable

from groupcoord.protocol.frozen import frozen_dataclass

from .errors import ProtocolError
from .varint import VARLONG_MAX_BYTES, decode_unsigned_varint

Skip = Callable[[Any, int, int], int]
"""Walks one value in ``buf[pos:end]`` and returns where it ends; raises WireBoundsError if it cannot."""

_FIXED_SIZES = {
    "int8": 1, "uint8": 1, "bool": 1,
    "int16": 2, "uint16": 2, "error_code": 2,
    "int32": 4, "uint32": 4, "timedelta_i32": 4,
    "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8, "datetime_i64": 8,
    "uuid": 16,
}


class WireBoundsError(ProtocolError):
    """A length, count or size on the wire claims more bytes than the buffer holds."""


def _uvarint(buf: Any, pos: int, end: int) -> tuple[int, int]:
    """An unsigned varint inside ``buf[pos:end]`` (the generated code inlines the one-byte case)."""
    return decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES, end)


def _fail(what: str) -> WireBoundsError:
    return WireBoundsError(f"{what} runs past the end of the buffer")


MAX_STRING_BYTES = 32767
"""Kafka's limit on any string field (its generated readers refuse a longer one, in every version)."""


def _long_string(n: int) -> WireBoundsError:
    return WireBoundsError(f"a string of {n} bytes: Kafka's limit is {MAX_STRING_BYTES}")


def _too_many(count: int, left: int) -> WireBoundsError:
    return WireBoundsError(f"array of {count} entries cannot fit in the {left} bytes left")


def _walk_tags(buf: Any, pos: int, end: int, known: dict[int, Skip]) -> int:
    count, pos = _uvarint(buf, pos, end)
    if count > end - pos:
        raise WireBoundsError(f"{count} tagged fields cannot fit in the {end - pos} bytes left")
    for _ in range(count):
        tag, pos = _uvarint(buf, pos, end)
        size, pos = _uvarint(buf, pos, end)
        stop = pos + size
        if stop > end:
            raise _fail(f"tagged field {tag}")
        inner = known.get(tag)
        if inner is not None:
            inner(buf, pos, stop)
        pos = stop
    return pos


_RUNTIME = {
    "_uv": _uvarint, "_fail": _fail, "_too_many": _too_many, "_long_string": _long_string, "_walk_tags": _walk_tags,
    "_E": WireBoundsError, "_h": struct.Struct(">h").unpack_from, "_i": struct.Struct(">i").unpack_from,
}


@frozen_dataclass
class _Shape:
    """What the compiler knows of one field before writing its code."""

    kind: str            # "fixed", "sized", "struct", "nullable_struct"
    size: int = 0        # fixed: its size; sized: the width of a legacy length (2 or 4)
    entity: type | None = None
    is_array: bool = False
    has_array: bool = False
    min_size: int = 0
    nullable: bool = True  # for an array: may it be null on the wire (Kafka's nullableVersions)


def _shape(f: dataclasses.Field, flexible: bool, is_tag: bool) -> _Shape:
    # kio.serial is imported when the first entity is walked, not with this module (daemon start-up)
    from kio.serial._introspect import EntityField, EntityTupleField, classify_field, get_schema_field_type, is_optional

    cls = classify_field(f)
    if isinstance(cls, (EntityField, EntityTupleField)):
        info = _info(cls.type_)
        nullable = isinstance(cls, EntityField) and not is_tag and is_optional(f)
        item = _Shape("nullable_struct" if nullable else "struct", entity=cls.type_, has_array=info.has_array,
                      min_size=1 if nullable else info.min_size)
    else:
        kafka_type = get_schema_field_type(f)
        size = _FIXED_SIZES.get(kafka_type)
        if size is not None:
            item = _Shape("fixed", size=size, min_size=size)
        else:
            width = 2 if kafka_type == "string" else 4
            item = _Shape("sized", size=width, min_size=1 if flexible else width)
    if cls.is_array:
        return dataclasses.replace(item, is_array=True, has_array=True, nullable=is_tag or is_optional(f))
    return item


@frozen_dataclass
class _Info:
    min_size: int
    has_array: bool


@cache
def _info(cls: type) -> _Info:
    from kio.serial._introspect import get_field_tag

    flexible = bool(cls.__flexible__)
    min_size, has_array = (1 if flexible else 0), False
    for f in dataclasses.fields(cls):
        is_tag = get_field_tag(f) is not None
        shape = _shape(f, flexible, is_tag)
        has_array = has_array or shape.has_array
        if not is_tag:
            min_size += (1 if flexible else 4) if shape.is_array else shape.min_size
    return _Info(min_size, has_array)


class _Writer:
    """Python source for one walker function, built field by field."""

    def __init__(self, flexible: bool, namespace: dict[str, Any], strings: bool = False) -> None:
        self.flexible = flexible
        self.ns = namespace
        self.strings = strings
        """Also refuse a string longer than Kafka's 32,767 bytes (the walker for large frames)."""
        self.lines: list[str] = []
        self.pending_fixed = 0

    def function(self, filename: str) -> Skip:
        """Compile what was written into ``walk(buf, pos, end) -> pos``."""
        ending = ["    if pos > end: raise _fail('entity')", "    return pos"]
        source = "def walk(buf, pos, end):\n" + "\n".join(self.lines + ending) + "\n"
        exec(compile(source, filename, "exec"), self.ns)
        return self.ns["walk"]

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def flush(self, indent: int = 1) -> None:
        if self.pending_fixed:
            self.emit(f"pos += {self.pending_fixed}", indent)
            self.pending_fixed = 0

    def read_uvarint(self, target: str, indent: int) -> None:
        self.emit(f"{target} = buf[pos]", indent)
        self.emit(f"if {target} < 128: pos += 1", indent)
        self.emit(f"else: {target}, pos = _uv(buf, pos, end)", indent)

    def value(self, shape: _Shape, indent: int) -> None:
        """Code that walks one (non-array) value of `shape`."""
        if shape.kind == "fixed":
            self.emit(f"pos += {shape.size}", indent)
        elif shape.kind == "sized":
            if self.flexible:
                self.read_uvarint("n", indent)
                self.emit("if n > 1: pos += n - 1", indent)
                if self.strings and shape.size == 2:
                    self.emit(f"if n > {MAX_STRING_BYTES + 1}: raise _long_string(n - 1)", indent)
            else:
                reader = "_h" if shape.size == 2 else "_i"
                self.emit(f"n = {reader}(buf, pos)[0]", indent)
                self.emit(f"pos += {shape.size}", indent)
                self.emit("if n > 0: pos += n", indent)
                self.emit("elif n < -1: raise _E('negative length %d' % n)", indent)
        elif shape.kind == "nullable_struct":
            self.emit("pos += 1", indent)
            self.emit("if buf[pos - 1] < 128:", indent)
            self.emit("pass", indent + 1)  # an entity of no fields writes no code
            self.entity(shape.entity, indent + 1)
        else:
            self.entity(shape.entity, indent)

    def entity(self, cls: type | None, indent: int) -> None:
        """A nested entity, inlined whole (the fields after it must be reached)."""
        from kio.serial._introspect import get_field_tag

        assert cls is not None
        flexible = bool(cls.__flexible__)
        tagged = {}
        for f in dataclasses.fields(cls):
            tag = get_field_tag(f)
            shape = _shape(f, flexible, tag is not None)
            if tag is None:
                self.field(shape, indent)
            else:
                tagged[tag] = shape
        self.flush(indent)
        if flexible:
            self.tags(tagged, indent)

    def tags(self, tagged: dict[int, _Shape], indent: int) -> None:
        name = f"_tags_{len(self.ns)}"
        self.ns[name] = {tag: _field_walker(shape, self.flexible, self.strings) for tag, shape in tagged.items()}
        self.emit("if buf[pos] == 0: pos += 1", indent)  # no tagged fields, the usual case
        self.emit(f"else: pos = _walk_tags(buf, pos, end, {name})", indent)

    def field(self, shape: _Shape, indent: int = 1) -> None:
        if not shape.is_array:
            if shape.kind == "fixed":
                self.pending_fixed += shape.size
                return
            self.flush(indent)
            self.value(shape, indent)
            return
        self.flush(indent)
        if self.flexible:
            self.read_uvarint("count", indent)
            self.emit("count -= 1", indent)
            if not shape.nullable:
                self.emit("if count < 0: raise _E('null array where this version requires one')", indent)
        else:
            self.emit("count = _i(buf, pos)[0]", indent)
            self.emit("pos += 4", indent)
            self.emit("if count < -1: raise _E('negative array length %d' % count)", indent)
            if not shape.nullable:
                self.emit("if count < 0: raise _E('null array where this version requires one')", indent)
        self.emit("if count > 0:", indent)
        per_item = max(shape.min_size, 1)
        self.emit(f"if count * {per_item} > end - pos: raise _too_many(count, end - pos)", indent + 1)
        if shape.kind == "fixed":
            self.emit(f"pos += count * {shape.size}", indent + 1)
        else:
            self.emit("for _ in range(count):", indent + 1)
            self.value(shape, indent + 2)


def _compile(cls: type) -> Skip | None:
    """The top-level walker: None without arrays; otherwise it stops after the last field that can
    hold one (tagged fields included)."""
    from kio.serial._introspect import get_field_tag

    flexible = bool(cls.__flexible__)
    plain: list[_Shape] = []
    tagged: dict[int, _Shape] = {}
    for f in dataclasses.fields(cls):
        tag = get_field_tag(f)
        shape = _shape(f, flexible, tag is not None)
        if tag is None:
            plain.append(shape)
        else:
            tagged[tag] = shape
    if not _info(cls).has_array:
        return None
    walk_tags = flexible
    if not any(s.has_array for s in tagged.values()):
        last = max(i for i, s in enumerate(plain) if s.has_array)
        plain, walk_tags = plain[: last + 1], False
    namespace: dict[str, Any] = dict(_RUNTIME)
    writer = _Writer(flexible, namespace)
    for shape in plain:
        writer.field(shape)
    writer.flush()
    if walk_tags:
        writer.tags(tagged, 1)
    return writer.function(f"<wire_bounds {cls.__module__}.{cls.__qualname__}>")


def _field_walker(shape: _Shape, flexible: bool, strings: bool = False) -> Skip:
    """A walker for one tagged field's value (its bytes are bounded by the tag's size)."""
    namespace: dict[str, Any] = dict(_RUNTIME)
    writer = _Writer(flexible, namespace, strings)
    writer.field(shape)
    writer.flush()
    return writer.function("<wire_bounds tagged field>")


def _compile_with_strings(cls: type) -> Skip:
    """Every field of a flexible entity, each string's length checked against Kafka's 32,767 bytes."""
    namespace: dict[str, Any] = dict(_RUNTIME)
    writer = _Writer(True, namespace, strings=True)
    writer.entity(cls, 1)
    return writer.function(f"<wire_bounds strings {cls.__module__}.{cls.__qualname__}>")


@cache
def long_frame_walker_for(cls: type) -> Skip:
    return _compile_with_strings(cls)


@cache
def walker_for(cls: type) -> Skip | None:
    """The compiled check for kio entity class `cls`, or None when nothing in it can lie dangerously."""
    return _compile(cls)


def check(cls: type, buf: Any, offset: int) -> None:
    """Raise WireBoundsError if the entity of class `cls` at `buf[offset:]` claims more than is there."""
    walk = walker_for(cls)
    if walk is not None:
        _run(walk, buf, offset)


def _run(walk: Skip, buf: Any, offset: int) -> None:
    """The generated code does not test every read against the end of the buffer: reading past it
    raises IndexError (or struct.error) here, and an overrun inside a tagged field's bytes is caught by
    the position check each walker ends with. Either way the frame is refused."""
    try:
        walk(buf, offset, len(buf))
    except (IndexError, struct.error) as exc:
        raise WireBoundsError("a length runs past the end of the buffer") from exc


def checked_reader(cls: type) -> Callable[[Any, int], tuple[Any, int]]:
    """kio's reader for `cls`, behind the bounds check: the only way client bytes reach kio.

    A flexible entity of more than 32 KiB may hold a string longer than Kafka's 32,767 bytes, which
    Kafka's generated readers refuse ("string field ... had invalid length"), closing the connection: such
    an entity is walked whole, strings included (a 50 MB group id once stalled every client for 8.6 s
    before it was refused further in). Smaller ones cannot hold such a string and keep the short walk."""
    from kio.serial import entity_reader

    read = entity_reader(cls)
    walk = walker_for(cls)
    if cls.__flexible__:
        def read_flexible(buf: Any, offset: int) -> tuple[Any, int]:
            if len(buf) - offset > MAX_STRING_BYTES:
                _run(long_frame_walker_for(cls), buf, offset)
            elif walk is not None:
                _run(walk, buf, offset)
            return read(buf, offset)

        return read_flexible
    if walk is None:
        return read

    def read_checked(buf: Any, offset: int) -> tuple[Any, int]:
        _run(walk, buf, offset)
        return read(buf, offset)

    return read_checked
