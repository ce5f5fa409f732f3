"""Version-neutral requests the shard understands (handlers.py converts kio's per-version classes): those of
the group APIs whose handlers are bound at start-up (JoinGroup, SyncGroup, Heartbeat, OffsetCommit: registry.py's
EAGER_MODULES). The other group APIs' requests are in lazy_requests.py, imported with their handlers.

Timeouts are plain int milliseconds here; the API version is carried only where
Kafka's answer depends on it.
"""

from __future__ import annotations

from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class JoinGroup:
    """A JoinGroup request, whatever its version."""
    group_id: str
    member_id: str
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    reason: str | None = None
    version: int = 9

    @property
    def requires_known_member_id(self) -> bool:
        """KIP-394: from v4 a new dynamic member is first handed an id (MEMBER_ID_REQUIRED)."""
        return self.version >= 4


@frozen_dataclass
class SyncGroup:
    """A SyncGroup request, whatever its version."""
    group_id: str
    generation_id: int
    member_id: str
    assignments: tuple[tuple[str, bytes], ...] = ()
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    version: int = 5


@frozen_dataclass
class Heartbeat:
    """A Heartbeat request, whatever its version."""
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@frozen_dataclass
class CommitPartition:
    """One partition's offset in an OffsetCommit request."""
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


@frozen_dataclass
class OffsetCommit:
    """An OffsetCommit request, whatever its version."""
    group_id: str
    topics: tuple[tuple[str, tuple[CommitPartition, ...]], ...]
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    version: int = 8
