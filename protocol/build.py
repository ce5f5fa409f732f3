"""Build version-specific kio entities from version-neutral data.

Handlers describe a response once, as a dict tree with kio's field names, and never branch on the API
version: `build` keeps the fields the target version has, drops the rest, and converts the plain values
handlers naturally produce (milliseconds, int error codes, None for absent timestamps) into the types
kio's schema declares (timedelta, ErrorCode, datetime). Nested lists of dicts become the version's
nested entity classes. A field the version requires but the data lacks uses the schema default, or
fails loudly — a silent zero would be a wire bug.
"""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
from dataclasses import MISSING
from functools import cache
from typing import Any, Callable, Mapping

from kio.schema.errors import ErrorCode

from groupcoord.protocol.frozen import frozen_dataclass

_UTC = datetime.timezone.utc


def _to_timedelta(value: Any) -> Any:
    if isinstance(value, datetime.timedelta):
        return value
    return datetime.timedelta(milliseconds=int(value))


def _to_datetime(value: Any) -> Any:
    if value is None or isinstance(value, datetime.datetime):
        return value
    value = int(value)
    if value < 0:
        return None
    return datetime.datetime.fromtimestamp(value / 1000, tz=_UTC)


def _to_error(value: Any) -> Any:
    return value if isinstance(value, ErrorCode) else ErrorCode(int(value))


def _identity(value: Any) -> Any:
    return value


_SCALAR_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "timedelta_i32": _to_timedelta,
    "timedelta_i64": _to_timedelta,
    "datetime_i64": _to_datetime,
    "error_code": _to_error,
}


def _entity_type(annotation: Any) -> type | None:
    """The nested entity class inside `X`, `X | None`, `tuple[X, ...]` or `tuple[X, ...] | None`."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                return _entity_type(arg)
        return None
    if origin is tuple:
        args = typing.get_args(annotation)
        return _entity_type(args[0]) if args else None
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return annotation
    return None


def _is_sequence(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_sequence(a) for a in typing.get_args(annotation) if a is not type(None))
    return origin is tuple


@frozen_dataclass
class _FieldPlan:
    name: str
    has_default: bool
    default: Any
    convert: Callable[[Any], Any]
    nested: type | None
    sequence: bool


@cache
def _plan(cls: type) -> tuple[_FieldPlan, ...]:
    hints = typing.get_type_hints(cls)
    plans = []
    for f in dataclasses.fields(cls):
        kafka_type = f.metadata.get("kafka_type", "")
        annotation = hints.get(f.name, f.type)
        nested = _entity_type(annotation)
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        default = f.default if f.default is not MISSING else (f.default_factory() if f.default_factory is not MISSING else None)
        plans.append(
            _FieldPlan(
                name=f.name,
                has_default=has_default,
                default=default,
                convert=_SCALAR_CONVERTERS.get(kafka_type, _identity),
                nested=nested,
                sequence=_is_sequence(annotation),
            )
        )
    return tuple(plans)


def build(cls: type, data: Mapping[str, Any] | Any, *, fill_missing: bool = False) -> Any:
    """Instantiate `cls` (a kio entity) from `data` (a dict tree, or already an instance of `cls`).

    `fill_missing` is for clients that write one request for many versions and leave out fields they do
    not care about: such fields take zero values (empty lists, "", 0, False) instead of failing."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise TypeError(f"cannot build {cls.__name__} from {type(data).__name__}")
    kwargs: dict[str, Any] = {}
    hints = typing.get_type_hints(cls) if fill_missing else {}
    for plan in _plan(cls):
        if plan.name not in data:
            if plan.has_default:
                continue
            if not fill_missing:
                raise KeyError(f"{cls.__name__}.{plan.name} is required by this version and missing")
            if plan.nested is not None and not plan.sequence:
                kwargs[plan.name] = build(plan.nested, {}, fill_missing=True)
            else:
                kwargs[plan.name] = _zero_for(hints[plan.name])
            continue
        value = data[plan.name]
        if plan.nested is not None and value is not None:
            if plan.sequence:
                value = tuple(build(plan.nested, item, fill_missing=fill_missing) for item in value)
            else:
                value = build(plan.nested, value, fill_missing=fill_missing)
        elif value is not None:
            value = plan.convert(value)
        kwargs[plan.name] = value
    return cls(**kwargs)


def has_field(cls: type, name: str) -> bool:
    return any(p.name == name for p in _plan(cls))


def _zero_for(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return None
    if origin is tuple:
        return ()
    if isinstance(annotation, type):
        if issubclass(annotation, ErrorCode):
            return ErrorCode.none
        if issubclass(annotation, bool):
            return False
        if issubclass(annotation, datetime.timedelta):
            return datetime.timedelta(0)
        if issubclass(annotation, int):
            return annotation(0) if annotation is not int else 0
        if issubclass(annotation, str):
            return ""
        if issubclass(annotation, bytes):
            return b""
    return None


def error_response(cls: type, error_code: int) -> Any:
    """A response of `cls` carrying only a top-level error: used where no handler can answer
    (an unsupported version, a handler that failed). Returns None when the response has no top-level
    error field, in which case the caller closes the connection instead."""
    hints = typing.get_type_hints(cls)
    if "error_code" not in hints:
        return None
    kwargs: dict[str, Any] = {}
    for plan in _plan(cls):
        if plan.name == "error_code":
            kwargs[plan.name] = ErrorCode(error_code)
        elif not plan.has_default:
            kwargs[plan.name] = _zero_for(hints[plan.name])
    return cls(**kwargs)
