"""A share-group member (Kafka's ShareGroupMember): no owned partitions to revoke, so no reconciliation states."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, fields, replace

Assignment = dict[uuid.UUID, frozenset[int]]  # topic id -> partitions

LEAVE_GROUP_MEMBER_EPOCH = -1
STABLE = 0  # MemberState.STABLE, the only state a share member is ever in (persisted as int8)


@dataclass(slots=True, eq=True)
class ShareMember:
    """A KIP-932 share group member: epochs, subscription, assignment, client."""
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1  # Kafka's Builder default
    state: int = STABLE
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    assigned: Assignment = field(default_factory=dict)

    def copy(self, **changes) -> "ShareMember":
        return replace(self, **changes)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state == STABLE and self.member_epoch == target_epoch


MEMBER_FIELDS = tuple(f.name for f in fields(ShareMember))
