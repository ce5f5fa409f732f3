"""Build version-specific kio entities from plain dicts.

The admin client picks an API version at run time (whatever both sides support), so request bodies are written
once as version-neutral dicts and shaped here for the chosen kio class: fields the version lacks are dropped,
fields the caller omits take the schema default, and plain ints become the timedelta/datetime/ErrorCode values
kio's writers expect.
"""

from __future__ import annotations

import datetime
from dataclasses import MISSING, Field, fields
from typing import Any, Mapping

from kio.schema.errors import ErrorCode
from kio.serial._introspect import EntityField, EntityTupleField, classify_field

_ZERO_BY_KAFKA_TYPE: dict[str, Any] = {
    "bool": False,
    "string": "",
    "bytes": b"",
    "records": None,
    "uuid": None,
    "float64": 0.0,
    "error_code": ErrorCode.none,
    "timedelta_i32": datetime.timedelta(0),
    "timedelta_i64": datetime.timedelta(0),
}


def build_entity(entity_cls: type, data: Mapping[str, Any]) -> Any:
    """Instantiate `entity_cls` from `data`, ignoring keys the class does not have."""
    kwargs: dict[str, Any] = {}
    for field in fields(entity_cls):
        if field.name in data:
            kwargs[field.name] = _convert(field, data[field.name])
        elif field.default is MISSING and field.default_factory is MISSING:
            kwargs[field.name] = _zero(field)
    return entity_cls(**kwargs)


def _convert(field: Field, value: Any) -> Any:
    kind = classify_field(field)
    if value is None:
        return None
    if isinstance(kind, EntityTupleField):
        return tuple(build_entity(kind.type_, item) for item in value)
    if isinstance(kind, EntityField):
        return build_entity(kind.type_, value)
    kafka_type = field.metadata.get("kafka_type")
    if kind.is_array:
        return tuple(_convert_scalar(kafka_type, item) for item in value)
    return _convert_scalar(kafka_type, value)


def _convert_scalar(kafka_type: str | None, value: Any) -> Any:
    if kafka_type in ("timedelta_i32", "timedelta_i64") and isinstance(value, int):
        return datetime.timedelta(milliseconds=value)
    if kafka_type == "datetime_i64" and isinstance(value, int):
        return datetime.datetime.fromtimestamp(value / 1000, tz=datetime.timezone.utc)
    if kafka_type == "error_code" and isinstance(value, int):
        return ErrorCode(value)
    return value


def _zero(field: Field) -> Any:
    kind = classify_field(field)
    if kind.is_array:
        return ()
    if isinstance(kind, EntityField):
        return build_entity(kind.type_, {})
    kafka_type = field.metadata.get("kafka_type", "")
    return _ZERO_BY_KAFKA_TYPE.get(kafka_type, 0)

