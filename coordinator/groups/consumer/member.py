"""A consumer-group member and its reconciliation state (Kafka's ConsumerGroupMember / MemberState)."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

Assignment = dict[uuid.UUID, frozenset[int]]  # topic id -> partitions

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class MemberState(enum.IntEnum):
    """Values as persisted in ConsumerGroupCurrentMemberAssignmentValue.State."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1  # must give partitions up before it may move to the next epoch
    UNRELEASED_PARTITIONS = 2  # at the target epoch, waiting for other members to release partitions
    UNKNOWN = 127

    @property
    def label(self) -> str:
        return self.name


@dataclass(slots=True, eq=False)
class ConsumerMember:
    """A KIP-848 consumer group member: epochs, subscription, assigned and pending partitions, timeouts."""
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str = ""  # Kafka's member keeps "" for "no regex", and persists and describes it so
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch

    def owned_partitions(self):
        """Every (topic id, partition) this member holds: assigned or not yet revoked."""
        for source in (self.assigned, self.pending_revocation):
            for topic_id, partitions in source.items():
                for p in partitions:
                    yield topic_id, p


def normalize(assignment: Assignment) -> Assignment:
    """Drops topics without partitions so two equal assignments compare equal."""
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


def is_subset(owned: Assignment | None, of: Assignment) -> bool:
    """Kafka's isSubset: a null (absent) owned list is not a subset of anything."""
    if owned is None:
        return False
    return all(ps <= of.get(t, frozenset()) for t, ps in owned.items())
