"""The schemas of ``__consumer_offsets``' records, as data: what offsets_records' generic reader and writer walk.

A record class's schema is its fields (``Field``: wire type, the versions it exists in, nullability, default,
tag) and its first flexible version; a record type names its key class, its value class and the value versions
read and written. offsets_records declares the offsets' and classic groups' records, consumer_share_records the
consumer and share groups' (imported on first use, for start-up time); each adds its own here with
``add_record_types`` as it is imported, so the tables hold every record type whose classes exist, and neither
module imports the other to do it (offsets_records imports consumer_share_records, on first use, never back).
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.frozen import frozen_dataclass

ALL = (0, 32767)


@frozen_dataclass
class Field:
    """One schema field: wire type, the versions it exists in, nullability, default, tag."""

    name: str
    kind: Any  # "int8" | "int16" | "int32" | "int64" | "string" | "bytes" | "uuid" | ("array", elem) | struct class
    versions: tuple[int, int] = ALL
    nullable: bool = False
    default: Any = None
    tag: int | None = None

    def present(self, version: int) -> bool:
        return self.versions[0] <= version <= self.versions[1]


def field(name, kind, lo=0, hi=32767, *, nullable=False, default=None, tag=None) -> Field:
    return Field(name, kind, (lo, hi), nullable, default, tag)


Schema = tuple[tuple[Field, ...], int | None]  # (fields, first flexible version or None)
RecordType = tuple[type, type, tuple[int, int], int]  # (key class, value class, value versions read, version written)

SCHEMAS: dict[type, Schema] = {}
RECORD_TYPES: dict[int, RecordType] = {}
KEY_TYPE_WRITTEN: dict[type, int] = {}
"""The record type each key class is written with (offset keys: type 1; type 0 is the 0.8.2-era key with
the same layout, read only)."""
VALUE_INFO: dict[type, tuple[tuple[int, int], int]] = {}
"""Each value class's (versions read, version written)."""


def add_record_types(schemas: dict[type, Schema], record_types: dict[int, RecordType]) -> None:
    """A records module's schemas and record types into the tables; the higher of two types with the same key
    class is the one written."""
    SCHEMAS.update(schemas)
    RECORD_TYPES.update(record_types)
    for record_type, (key_cls, value_cls, versions, written) in sorted(record_types.items()):
        KEY_TYPE_WRITTEN[key_cls] = record_type
        VALUE_INFO[value_cls] = (versions, written)
