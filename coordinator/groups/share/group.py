"""A share group's data (Kafka's ShareGroup): epochs, members, the target assignment, its share-partition state.

Its state is only Empty or Stable (Kafka 4.3): there is no revocation phase, a share partition may be
held by several members at once and the records' locks, not the assignment, keep two members apart.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

from groupcoord.coordinator.groups.share.member import Assignment, ShareMember
from groupcoord.coordinator.groups.share.state_metadata import ShareStatePartitions
from groupcoord.protocol.names import SHARE_GROUP_TYPE, SHARE_PROTOCOL_TYPE  # noqa: F401 (re-exported)

# ModernGroup starts at group epoch 1 and TargetAssignmentMetadata.INITIAL is epoch 1 (Kafka 4.3).
INITIAL_EPOCH = 1
ASSIGNOR_NAME = "simple"


class ShareGroupState(enum.Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"
    UNKNOWN = "Unknown"


@dataclass(slots=True, eq=False)
class ShareGroup:
    """A KIP-932 share group's live state: epochs, metadata hash, members, target assignment."""
    group_id: str
    group_epoch: int = INITIAL_EPOCH
    metadata_hash: int = 0
    assignment_epoch: int = INITIAL_EPOCH
    assignment_timestamp: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    # {topic name: partition count} of the subscribed topics when the epoch was last bumped (in memory;
    # Kafka keeps a hash of it in ShareGroupMetadataValue.MetadataHash).
    subscription_metadata: dict[str, int] = field(default_factory=dict)
    partitions: ShareStatePartitions | None = None  # ShareGroupStatePartitionMetadata, once written

    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    @property
    def size(self) -> int:
        return len(self.members)

    def subscribed_topic_names(self) -> dict[str, int]:
        """Topic name -> how many members subscribe to it (Kafka's subscribedTopicNames map)."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            for t in m.subscribed_topic_names:
                counts[t] = counts.get(t, 0) + 1
        return counts

    def is_homogeneous(self, members: dict[str, ShareMember]) -> bool:
        """Kafka's ModernGroup.subscriptionType: every member subscribes to the same topics."""
        subs = {m.subscribed_topic_names for m in members.values()}
        return len(subs) <= 1

    def initialized(self) -> dict[uuid.UUID, frozenset[int]]:
        if self.partitions is None:
            return {}
        return {t: ps for t, (_, ps) in self.partitions.initialized.items()}
