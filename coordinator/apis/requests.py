"""Readings of a kio request that several APIs share."""

from __future__ import annotations

from typing import Any, Hashable, Iterable

from groupcoord.coordinator.server.dispatch import RequestContext


def client_host(ctx: RequestContext) -> str:
    """The client's address as Kafka reports it for a member: ``/127.0.0.1`` (Java's InetAddress form)."""
    return member_host(ctx.client_host)


def member_host(host: str) -> str:
    """``client_host`` from the connection's peer address itself (what a frame-loop lane has, no context)."""
    if host and not host.startswith("/"):
        return "/" + host
    return host or ""


def duplicates(names: Iterable[Hashable]) -> set[Any]:
    """The names given more than once (Kafka refuses each of those entries as INVALID_REQUEST)."""
    seen: set[Any] = set()
    dupes: set[Any] = set()
    for name in names:
        (dupes if name in seen else seen).add(name)
    return dupes
