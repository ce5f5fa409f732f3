"""Structure-aware fuzzing material: well-formed request bodies for any kio schema, and mutations of them.

A body is generated from kio's field metadata (the same introspection the broker's encoder and bounds
check use), with random values and small random array sizes, so it is valid by construction; the
mutators then lie in the ways an attacker or a broken client would: flipped bytes, cut frames, and
length prefixes and counts replaced by huge or negative values.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import struct
from typing import Any

from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)

from groupcoord.protocol.registry import is_flexible, kio_versions, request_class
from groupcoord.protocol.varint import encode_unsigned_varint as uvarint

from .batch_fuzz import record_batch

_FIXED = {
    "int8": 1, "uint8": 1, "bool": 1, "int16": 2, "uint16": 2, "error_code": 2, "int32": 4, "uint32": 4,
    "timedelta_i32": 4, "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8, "datetime_i64": 8, "uuid": 16,
}
HUGE_COUNTS = (0x7FFFFFFF, 0x7FFFFFF0, 0x10000000, -1, -2, -0x80000000)
# Names come from a small vocabulary, so that a long run touches the same few topics, groups and
# transactional ids again and again (state, and memory, stay bounded while every path is exercised);
# half of all integers are small, so that partitions, generations and offsets sometimes mean something.
NAMES = (b"", b"t", b"g", b"a", b"x-1", b"__consumer_offsets")
SMALL_INTS = (-1, 0, 1, 2)
# Partition indexes likewise: a committed offset is kept per (group, topic, partition) for the retention
# period, by Kafka too, so random 32-bit indexes made a million-frame run's RSS grow with the offsets it
# legitimately stored (+24 % over 1M frames). A few extremes stay in the set, so those paths are still taken.
PARTITION_INDEXES = (-2, -1, 0, 1, 2, 3, 7, 1000, 0x7FFFFFFF, -0x80000000)
_INT_FORMATS = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q"}


def _scalar(kafka_type: str, flexible: bool, rng: random.Random, name: str = "") -> bytes:
    if kafka_type == "int32" and "partition" in name and rng.random() < 0.95:
        return struct.pack(">i", rng.choice(PARTITION_INDEXES))
    if kafka_type == "bool":
        return bytes([rng.randint(0, 1)])
    if kafka_type in ("float64",):
        return struct.pack(">d", rng.random())
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        return struct.pack(">i" if kafka_type == "timedelta_i32" else ">q", rng.randint(-1, 600_000))
    if kafka_type == "datetime_i64":
        return struct.pack(">q", rng.choice((-1, 1_700_000_000_000)))
    size = _FIXED.get(kafka_type)
    if size is not None:
        if kafka_type in _INT_FORMATS and rng.random() < 0.5:
            return struct.pack(_INT_FORMATS[kafka_type], rng.choice(SMALL_INTS))
        return rng.randbytes(size)
    if kafka_type == "records" and rng.random() < 0.8:
        raw = record_batch(rng)
    elif kafka_type == "string":
        raw = rng.choice(NAMES)
    else:
        raw = bytes(rng.choice(b"abcxyz-_.") for _ in range(rng.randint(0, 6)))
    if flexible:
        return uvarint(len(raw) + 1) + raw
    return struct.pack(">h" if kafka_type == "string" else ">i", len(raw)) + raw


@dataclasses.dataclass(frozen=True)
class _FieldPlan:
    """What kio's metadata says about one field, looked up once per class (introspection is slow)."""
    tag: int | None
    entity: type | None          # the nested entity class, for entity fields
    optional_entity: bool        # a nullable struct (not for tagged fields)
    is_array: bool
    kafka_type: str | None       # for scalar fields
    name: str = ""


@functools.lru_cache(maxsize=None)
def _plan(cls: type) -> tuple[_FieldPlan, ...]:
    plans = []
    for f in dataclasses.fields(cls):
        tag = get_field_tag(f)
        kind = classify_field(f)
        entity = kind.type_ if isinstance(kind, (EntityField, EntityTupleField)) else None
        plans.append(_FieldPlan(
            tag, entity, entity is not None and isinstance(kind, EntityField) and tag is None and is_optional(f),
            kind.is_array, None if entity is not None else get_schema_field_type(f), f.name))
    return tuple(plans)


def _field(plan: _FieldPlan, flexible: bool, rng: random.Random, depth: int) -> bytes:
    def one() -> bytes:
        if plan.entity is None:
            return _scalar(plan.kafka_type, flexible, rng, plan.name)  # type: ignore[arg-type]
        if plan.optional_entity and rng.random() < 0.3:
            return b"\xff"
        inner = body(plan.entity, rng, depth + 1)
        return b"\x01" + inner if plan.optional_entity else inner

    if not plan.is_array:
        return one()
    count = rng.randint(0, 3 if depth < 3 else 1)
    prefix = uvarint(count + 1) if flexible else struct.pack(">i", count)
    return prefix + b"".join(one() for _ in range(count))


def body(cls: type, rng: random.Random, depth: int = 0) -> bytes:
    """A well-formed encoding of kio entity class `cls` with random contents."""
    flexible = bool(cls.__flexible__)
    out = bytearray()
    tagged = []
    for plan in _plan(cls):
        if plan.tag is None:
            out += _field(plan, flexible, rng, depth)
        elif rng.random() < 0.3:
            tagged.append((plan.tag, _field(plan, flexible, rng, depth)))
    if flexible:
        out += uvarint(len(tagged))
        for tag, data in sorted(tagged):
            out += uvarint(tag) + uvarint(len(data)) + data
    return bytes(out)


def request_frame(api_key: int, version: int, rng: random.Random, correlation_id: int = 1) -> bytes:
    """A whole request frame (size prefix, header v1 or v2, body) for `api_key` at `version`."""
    header = struct.pack(">hhi", api_key, version, correlation_id) + struct.pack(">h", 4) + b"fuzz"
    if is_flexible(api_key, version):
        header += b"\x00"  # no tagged header fields
    payload = header + body(request_class(api_key, version), rng)
    return struct.pack(">i", len(payload)) + payload


def mutate(frame: bytes, rng: random.Random) -> bytes:
    """One lie about `frame`: a flipped byte, a huge or negative count written over four bytes, a varint
    count written over a byte, a cut, or random bytes appended. The size prefix is kept truthful about
    the mutated body unless the mutation is the prefix itself."""
    body_ = bytearray(frame[4:])
    kind = rng.randrange(6)
    if kind == 0 and body_:
        for _ in range(rng.randint(1, 4)):
            body_[rng.randrange(len(body_))] ^= 1 << rng.randrange(8)
    elif kind == 1 and len(body_) > 12:
        pos = rng.randrange(8, len(body_) - 3)
        body_[pos:pos + 4] = struct.pack(">i", rng.choice(HUGE_COUNTS))
    elif kind == 2 and len(body_) > 9:
        pos = rng.randrange(8, len(body_))
        body_[pos:pos + 1] = uvarint(rng.choice((0x7FFFFFF0, 0xFFFFFFFF, 1 << 40)))
    elif kind == 3 and len(body_) > 8:
        del body_[rng.randrange(8, len(body_)):]
    elif kind == 4:
        body_ += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
    else:
        return struct.pack(">i", rng.choice((len(body_), len(body_) + 1, 0x7FFFFFFF, -1))) + bytes(body_)
    return struct.pack(">i", len(body_)) + bytes(body_)


def every_request_version() -> list[tuple[int, int]]:
    """(api_key, version) for every request schema kio has."""
    from kio.schema.index import api_key_map

    return [(key, v) for key in sorted(api_key_map) for v in kio_versions(key)]
