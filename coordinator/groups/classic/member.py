"""One member of a classic group, and what it is currently waiting for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groupcoord.coordinator.groups.classic.shared_sets import protocol_names


@dataclass(slots=True, eq=False)
class ClassicMember:
    """A classic group's member: its ids, client, timeouts, protocols offered, assignment, and what it is waiting
    for."""
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    # A parked JoinGroup/SyncGroup: the caller's token and the API version to shape the answer for.
    join_token: Any = None
    join_version: int = 0
    sync_token: Any = None
    # True until the member's first join completes: it has no id the client knows, so it cannot heartbeat yet.
    is_new: bool = False
    joined_at_ms: int = 0
    protocol_names: frozenset[str] = field(default=frozenset())

    def __post_init__(self) -> None:
        self.protocol_names = protocol_names(self.protocols)

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.join_token is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.sync_token is not None

    def metadata(self, protocol: str | None) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        return b""

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """Same protocols with the same metadata in the same order: rejoining changes nothing."""
        return self.protocols == protocols

    def has_satisfied_heartbeat(self) -> bool:
        """Whether an expiring heartbeat deadline should spare this member (Kafka's rule).

        New members may expire while their first JoinGroup is parked (they have the
        5 minute new-member timeout instead); established members parked in a
        JoinGroup or SyncGroup are never expired, because they cannot heartbeat
        while the coordinator holds their request.
        """
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync

    def set_protocols(self, protocols: tuple[tuple[str, bytes], ...]) -> None:
        self.protocols = protocols
        self.protocol_names = protocol_names(protocols)
