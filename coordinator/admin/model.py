"""What the admin commands know about groups and offsets, independent of protocol versions."""

from __future__ import annotations

from groupcoord.protocol.frozen import frozen_dataclass

TopicPartition = tuple[str, int]


@frozen_dataclass(slots=False)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str | None  # None when the broker's ListGroups version predates group states


@frozen_dataclass(slots=False)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...] = ()


@frozen_dataclass(slots=False)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberDescription, ...] = ()
    coordinator: tuple[int, str, int] | None = None  # node id, host, port

    @property
    def is_inactive(self) -> bool:
        """Kafka only lets operators rewrite offsets of a group nobody is consuming with."""
        return self.state in ("Empty", "Dead")


@frozen_dataclass(slots=False)
class CommittedOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int | None = None  # OffsetFetch does not carry it; snapshots read from the log do


@frozen_dataclass(slots=False)
class LagRow:
    """One line of `groups describe`, with the columns of kafka-consumer-groups --describe."""

    group: str
    topic: str | None  # None for a member that has no partitions
    partition: int | None
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@frozen_dataclass(slots=False)
class PartitionOffsets:
    """What the log says about one partition, used to plan an offsets reset."""

    earliest: int
    latest: int
    current: int | None = None
    at_timestamp: int | None = None  # first offset with timestamp >= the requested time, None if past the end
