"""Services a broker makes on their first use, and the one way to ask whether one has been made.

Why: a broker starts without what most brokers never use before a request asks for it (the Produce service, the
transaction markers' router, the share sessions, the coordinators' shards: each a ``functools.cached_property``
of its owner, made, and its module imported, by the first read). A caller that only has something to tell a
service if it exists (a setting wired in after it, a closed connection, a metrics scrape) must not make it by
asking, so it asks here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["made"]


def made(owner: object, name: str) -> Any | None:
    """What ``owner``'s cached property ``name`` made, or None while nothing has read it (it is not made now)."""
    return vars(owner).get(name)
