"""The one guard that lets the reference suites run before groupcoord serves every API they need."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from tests.conformance.requests import DEFAULT_VERSIONS, Api
from tests.conformance.wire import supported_versions

_VERSIONS_BY_BOOTSTRAP: dict[str, dict[int, tuple[int, int]]] = {}


def api_name(api: Api) -> str:
    return "".join(part.capitalize() for part in api.name.split("_"))


def missing_api(served: dict[int, tuple[int, int]], apis: Iterable[Api], *, pinned: bool = True) -> str | None:
    """Why the broker cannot run these APIs, or None. pinned: the scenario's fixed version must be served
    too (the raw client never negotiates); a stock client negotiates, so any version will do."""
    for api in apis:
        if int(api) not in served:
            return f"groupcoord does not serve {api_name(api)} yet"
        low, high = served[int(api)]
        version = DEFAULT_VERSIONS.get(api) if pinned else None
        if version is not None and not low <= version <= high:
            return f"groupcoord does not serve {api_name(api)} v{version} yet (serves {low}-{high})"
    return None


async def skip_unless_served(bootstrap: str, apis: Iterable[Api], *, pinned: bool = True) -> None:
    """Skips a test whose APIs groupcoord does not announce in ApiVersions yet (remove once all land)."""
    if bootstrap not in _VERSIONS_BY_BOOTSTRAP:
        _VERSIONS_BY_BOOTSTRAP[bootstrap] = await supported_versions(bootstrap)
    reason = missing_api(_VERSIONS_BY_BOOTSTRAP[bootstrap], apis, pinned=pinned)
    if reason is not None:
        pytest.skip(reason=reason)
