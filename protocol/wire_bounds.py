"""Bounds check of a kio entity's wire bytes before kio's native reader sees them.

Why this exists: kio's native (Rust) reader sizes every array from the count on the wire before it
reads an element (``Vec::with_capacity(count)``). A FindCoordinator v4 of 32 bytes whose key array
claims two billion entries made it ask the allocator for 100 GB, and a failed allocation in Rust aborts
the process: every client of the broker lost it. Strings and bytes are safe (kio compares their length
with the buffer and raises), arrays are not — at any depth, in tagged fields too.

So every client-supplied entity is walked here first, driven by the same kio field metadata kio reads
with (through kio's own introspection helpers, as ``protocol/encode.py`` does): each array count is
checked against the bytes left (each element takes at least its minimum encoded size), each length and
tagged-field size against the end of its buffer. Nothing is built; a frame that lies raises
``ProtocolError`` and its connection is closed. The walk stops after the last field that can hold an
array, so an entity without arrays (Heartbeat, most of a Produce) costs one dictionary look-up.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any, Callable

from kio.serial import entity_reader
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)

from .errors import ProtocolError
from .varint import VARLONG_MAX_BYTES, decode_unsigned_varint

Skip = Callable[[Any, int, int], int]
"""Walks one value in ``buf[pos:end]`` and returns where it ends; raises ProtocolError if it cannot."""

_FIXED_SIZES = {
    "int8": 1, "uint8": 1, "bool": 1,
    "int16": 2, "uint16": 2, "error_code": 2,
    "int32": 4, "uint32": 4, "timedelta_i32": 4,
    "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8, "datetime_i64": 8,
    "uuid": 16,
}


class WireBoundsError(ProtocolError):
    """A length, count or size on the wire claims more bytes than the buffer holds."""


def _int(buf: Any, pos: int, end: int, size: int) -> int:
    if pos + size > end:
        raise WireBoundsError("length prefix runs past the end of the buffer")
    return int.from_bytes(buf[pos:pos + size], "big", signed=True)


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    """How to walk one kio entity: the minimum size of its encoding, whether any array can appear in
    it, and the walker (None when there is nothing to check)."""

    min_size: int
    has_array: bool
    skip: Skip | None


def _fixed_skip(size: int) -> Skip:
    def skip_fixed(buf: Any, pos: int, end: int) -> int:
        pos += size
        if pos > end:
            raise WireBoundsError("value runs past the end of the buffer")
        return pos

    return skip_fixed


def _sized_skip(kafka_type: str, flexible: bool) -> Skip:
    """string / bytes / records: a length then that many bytes (-1 or compact 0 is null)."""
    if flexible:
        def skip_compact(buf: Any, pos: int, end: int) -> int:
            n, pos = decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES, end)
            pos += max(n - 1, 0)
            if pos > end:
                raise WireBoundsError(f"{kafka_type} length runs past the end of the buffer")
            return pos

        return skip_compact
    width = 2 if kafka_type == "string" else 4

    def skip_legacy(buf: Any, pos: int, end: int) -> int:
        n = _int(buf, pos, end, width)
        if n < -1:
            raise WireBoundsError(f"negative {kafka_type} length {n}")
        pos += width + max(n, 0)
        if pos > end:
            raise WireBoundsError(f"{kafka_type} length runs past the end of the buffer")
        return pos

    return skip_legacy


def _array_skip(item: Skip, item_min: int, flexible: bool) -> Skip:
    per_item = max(item_min, 1)

    def walk(buf: Any, pos: int, end: int, count: int) -> int:
        if count * per_item > end - pos:
            raise WireBoundsError(f"array of {count} entries cannot fit in the {end - pos} bytes left")
        if item_min and _is_fixed(item):
            return pos + count * item_min
        for _ in range(count):
            pos = item(buf, pos, end)
        return pos

    if flexible:
        def skip_compact_array(buf: Any, pos: int, end: int) -> int:
            n, pos = decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES, end)
            return pos if n == 0 else walk(buf, pos, end, n - 1)

        return skip_compact_array

    def skip_legacy_array(buf: Any, pos: int, end: int) -> int:
        n = _int(buf, pos, end, 4)
        if n < -1:
            raise WireBoundsError(f"negative array length {n}")
        return pos + 4 if n == -1 else walk(buf, pos + 4, end, n)

    return skip_legacy_array


def _is_fixed(skip: Skip) -> bool:
    return getattr(skip, "__name__", "") == "skip_fixed"


def _nullable_struct_skip(inner: Skip) -> Skip:
    def skip_nullable_struct(buf: Any, pos: int, end: int) -> int:
        marker = _int(buf, pos, end, 1)
        return pos + 1 if marker < 0 else inner(buf, pos + 1, end)

    return skip_nullable_struct


def _field_plan(f: dataclasses.Field, flexible: bool, is_tag: bool) -> tuple[Skip, int, bool]:
    """(walker, minimum encoded size, may hold an array) for one field."""
    cls = classify_field(f)
    if isinstance(cls, (EntityField, EntityTupleField)):
        inner_plan = plan_for(cls.type_)
        inner = _full_skip(cls.type_)  # a nested entity is walked whole: the fields after it follow it
        inner_min, inner_array = inner_plan.min_size, inner_plan.has_array
        if isinstance(cls, EntityField) and not is_tag and is_optional(f):
            inner, inner_min = _nullable_struct_skip(inner), 1
    else:
        kafka_type = get_schema_field_type(f)
        size = _FIXED_SIZES.get(kafka_type)
        if size is not None:
            inner, inner_min = _fixed_skip(size), size
        else:
            inner, inner_min = _sized_skip(kafka_type, flexible), (1 if flexible else (2 if kafka_type == "string" else 4))
        inner_array = False
    if cls.is_array:
        return _array_skip(inner, inner_min, flexible), (1 if flexible else 4), True
    return inner, inner_min, inner_array


@cache
def _full_skip(cls: type) -> Skip:
    """Walk the whole entity (used when it is nested: the fields after it must be reached)."""
    return _compile(cls, stop_early=False).skip  # type: ignore[return-value]


def _compile(cls: type, stop_early: bool) -> _Plan:
    flexible = bool(cls.__flexible__)
    plain: list[tuple[Skip, bool]] = []
    tagged: dict[int, tuple[Skip, bool]] = {}
    min_size = 0
    for f in dataclasses.fields(cls):
        tag = get_field_tag(f)
        skip, size, has_array = _field_plan(f, flexible, tag is not None)
        if tag is None:
            plain.append((skip, has_array))
            min_size += size
        else:
            tagged[tag] = (skip, has_array)
    if flexible:
        min_size += 1  # the tagged-field count
    has_array = any(a for _, a in plain) or any(a for _, a in tagged.values())
    if stop_early and not has_array:
        return _Plan(min_size, False, None)
    tags_need_walk = any(a for _, a in tagged.values())
    if stop_early and not tags_need_walk:
        last = max(i for i, (_, a) in enumerate(plain) if a)
        plain = plain[: last + 1]
        walk_tags = False
    else:
        walk_tags = flexible
    steps = tuple(skip for skip, _ in plain)
    tag_skips = {tag: skip for tag, (skip, _) in tagged.items()}

    def skip_entity(buf: Any, pos: int, end: int) -> int:
        for step in steps:
            pos = step(buf, pos, end)
        if walk_tags:
            count, pos = decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES, end)
            if count > end - pos:
                raise WireBoundsError(f"{count} tagged fields cannot fit in the {end - pos} bytes left")
            for _ in range(count):
                tag, pos = decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES, end)
                size, pos = decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES, end)
                stop = pos + size
                if stop > end:
                    raise WireBoundsError(f"tagged field {tag} runs past the end of the buffer")
                inner = tag_skips.get(tag)
                if inner is not None:
                    inner(buf, pos, stop)
                pos = stop
        return pos

    return _Plan(min_size, has_array, skip_entity)


@cache
def plan_for(cls: type) -> _Plan:
    """The compiled walk for kio entity class `cls` (cached: compiled once per class)."""
    return _compile(cls, stop_early=True)


def check(cls: type, buf: Any, offset: int) -> None:
    """Raise WireBoundsError if the entity of class `cls` at `buf[offset:]` claims more than is there."""
    skip = plan_for(cls).skip
    if skip is not None:
        skip(buf, offset, len(buf))


def checked_reader(cls: type) -> Callable[[Any, int], tuple[Any, int]]:
    """kio's reader for `cls`, behind the bounds check: the only way client bytes reach kio."""
    read = entity_reader(cls)
    skip = plan_for(cls).skip
    if skip is None:
        return read

    def read_checked(buf: Any, offset: int) -> tuple[Any, int]:
        skip(buf, offset, len(buf))
        return read(buf, offset)

    return read_checked
