"""Version-neutral requests of the group APIs whose handlers load on their first request (LeaveGroup, OffsetFetch,
OffsetDelete, TxnOffsetCommit, ConsumerGroupHeartbeat, ShareGroupHeartbeat); requests.py holds those of the
handlers bound at start-up. Apart so that the daemon's start-up does not build these seven dataclasses (the group
coordinator's modules name them in annotations only).

Timeouts are plain int milliseconds here; the API version is carried only where
Kafka's answer depends on it.
"""

from __future__ import annotations

import uuid

from groupcoord.coordinator.groups.requests import CommitPartition
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class LeavingMember:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@frozen_dataclass
class LeaveGroup:
    group_id: str
    members: tuple[LeavingMember, ...]
    version: int = 5


@frozen_dataclass
class TxnOffsetCommit:
    """Offsets committed inside a producer's transaction: pending until its marker (KIP-98, KIP-447)."""

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    topics: tuple[tuple[str, tuple[CommitPartition, ...]], ...]
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    version: int = 4


@frozen_dataclass
class OffsetFetch:
    group_id: str
    topics: tuple[tuple[str, tuple[int, ...]], ...] | None  # None = every committed partition
    require_stable: bool = False
    member_id: str | None = None  # OffsetFetch v9+ (KIP-848): checked against a consumer group's members
    member_epoch: int = -1


@frozen_dataclass
class OffsetDelete:
    group_id: str
    topics: tuple[tuple[str, tuple[int, ...]], ...]


@frozen_dataclass
class ConsumerGroupHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: tuple[tuple[uuid.UUID, tuple[int, ...]], ...] | None = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1


@frozen_dataclass
class ShareGroupHeartbeat:
    """KIP-932: the member id is always the client's own (v1), epoch 0 joins and -1 leaves."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None
    client_id: str = ""
    client_host: str = ""
