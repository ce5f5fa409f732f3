"""Which APIs and versions the server serves, and where their kio schemas live.

One registry answers ApiVersions and guards every request, so the server can never advertise a
version it does not serve, nor serve one it did not advertise. Schema lookups (request/response class,
flexibility, reader and writer) are cached here because kio resolves them by dynamic import.
"""

from __future__ import annotations

import io
from functools import cache
from typing import Any, Callable

from kio.schema.index import api_key_map, schema_name_map
from kio.static.constants import EntityType

from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class ApiRange:
    """The versions of one API the broker serves (ApiVersions' answer, and the dispatcher's check)."""
    api_key: int
    min_version: int
    max_version: int

    @property
    def name(self) -> str:
        return api_name(self.api_key)

    def __contains__(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


@cache
def api_name(api_key: int) -> str:
    """Kafka's CamelCase API name, e.g. 11 -> JoinGroup."""
    snake = api_key_map.get(api_key)
    if snake is None:
        return f"Unknown{api_key}"
    return "".join(part.capitalize() for part in snake.split("_"))


@cache
def kio_versions(api_key: int) -> range:
    """The versions kio has schemas for (both request and response)."""
    name = api_key_map.get(api_key)
    if name is None:
        return range(0)
    versions = sorted(
        v
        for v, types in schema_name_map[name].items()
        if EntityType.request in types and EntityType.response in types
    )
    return range(versions[0], versions[-1] + 1) if versions else range(0)


@cache
def request_class(api_key: int, version: int) -> type:
    # kio.index (and the kio.static.protocol and header schemas it imports) on first use, not at start-up
    from kio.index import load_request_schema

    return load_request_schema(api_key, version)


@cache
def response_class(api_key: int, version: int) -> type:
    from kio.index import load_response_schema

    return load_response_schema(api_key, version)


@cache
def is_flexible(api_key: int, version: int) -> bool:
    return bool(request_class(api_key, version).__flexible__)


@cache
def request_reader(api_key: int, version: int) -> Callable[[Any, int], tuple[Any, int]]:
    """kio's reader behind the bounds check (wire_bounds.py): request bytes come from anyone. (wire_bounds is
    imported by the first request, not at start-up.)"""
    from .wire_bounds import checked_reader

    return checked_reader(request_class(api_key, version))


@cache
def response_reader(api_key: int, version: int) -> Callable[[Any, int], tuple[Any, int]]:
    from .wire_bounds import checked_reader

    return checked_reader(response_class(api_key, version))


@cache
def _writer(cls: type) -> Callable[[Any, Any], None]:
    from kio.serial import entity_writer  # on first use: kio.serial is not needed before the first request

    return entity_writer(cls)


def encode_entity(entity: Any) -> bytes:
    buf = io.BytesIO()
    _writer(type(entity))(buf, entity)
    return buf.getvalue()


class ApiRegistry:
    """The served API ranges; filled by handler registration, read by ApiVersions and the dispatcher."""

    def __init__(self) -> None:
        self._ranges: dict[int, ApiRange] = {}
        self.generation = 0  # bumped on every change, so answers derived from the registry can be cached

    def add(self, api_key: int, min_version: int, max_version: int) -> ApiRange:
        covered = kio_versions(api_key)
        if not covered or min_version < covered.start or max_version >= covered.stop or min_version > max_version:
            raise ValueError(
                f"{api_name(api_key)} v{min_version}-v{max_version} is outside the versions kio covers "
                f"({covered.start}-{covered.stop - 1})"
            )
        rng = ApiRange(api_key, min_version, max_version)
        self._ranges[api_key] = rng
        self.generation += 1
        return rng

    def get(self, api_key: int) -> ApiRange | None:
        return self._ranges.get(api_key)

    def supports(self, api_key: int, version: int) -> bool:
        rng = self._ranges.get(api_key)
        return rng is not None and version in rng

    def ranges(self) -> list[ApiRange]:
        return [self._ranges[k] for k in sorted(self._ranges)]
