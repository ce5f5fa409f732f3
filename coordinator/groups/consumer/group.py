"""A consumer group's data: epochs, members, the target assignment, who owns which partition, offsets.

Only bookkeeping lives here (the partition-epoch index that stops a partition being
given to two members); the rules about when things change are in heartbeat.py,
reconciliation.py and the assignors.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

from groupcoord.coordinator.groups.consumer.member import Assignment, ConsumerMember, MemberState
from groupcoord.coordinator.groups.offsets_records import OffsetCommitValue
from groupcoord.protocol.names import CONSUMER_GROUP_TYPE, CONSUMER_PROTOCOL_TYPE  # noqa: F401 (re-exported)

# Kafka 4.3's ModernGroup starts a new group at group and assignment epoch 1, so its first member joins at 2.
INITIAL_EPOCH = 1


class ConsumerGroupState(enum.Enum):
    """Kafka's ConsumerGroup.ConsumerGroupState, spelled as ListGroups/ConsumerGroupDescribe show it."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


def state_of(group_epoch: int, assignment_epoch: int, members: tuple[ConsumerMember, ...]) -> ConsumerGroupState:
    """Kafka's maybeUpdateGroupState: derived from the epochs and the members, never stored."""
    if not members:
        return ConsumerGroupState.EMPTY
    if group_epoch > assignment_epoch:
        return ConsumerGroupState.ASSIGNING
    for m in members:
        if m.member_epoch != assignment_epoch or m.state is not MemberState.STABLE:
            return ConsumerGroupState.RECONCILING
    return ConsumerGroupState.STABLE


@dataclass(slots=True, eq=False)
class ConsumerGroup:
    """A KIP-848 consumer group's live state: epochs, members, target assignment, subscribed topics."""
    group_id: str
    group_epoch: int = INITIAL_EPOCH
    assignment_epoch: int = INITIAL_EPOCH
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)  # member id -> target assignment
    partition_epochs: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    # {topic name: partition count} the last epoch bump saw; in memory only (Kafka 4.x keeps a hash of it).
    subscription_metadata: dict[str, int] = field(default_factory=dict)
    offsets: dict[tuple[str, int], OffsetCommitValue] = field(default_factory=dict)
    state_timestamp: int = -1  # when the group last became Empty (offset retention counts from there)
    # Bumped whenever a member comes, goes or changes its subscription: the key of `subscription_cache`,
    # the union of what the members subscribe to (names, regexes), so that a heartbeat that changes
    # nothing does not walk every member (subscriptions.group_subscription_metadata_cached).
    subscriptions_version: int = 0
    # When the target assignment was last computed, as its metadata record carries it (Kafka 4.3's
    # assignmentTimestamp; 0: never, or not recorded): with group.consumer.assignment.interval.ms the next
    # one waits until this plus the interval. Persisted, so a reload keeps the wait.
    assignment_timestamp: int = 0
    subscription_cache: tuple[int, frozenset[str], frozenset[str]] | None = None

    @property
    def state(self) -> ConsumerGroupState:
        return state_of(self.group_epoch, self.assignment_epoch, tuple(self.members.values()))

    @property
    def size(self) -> int:
        return len(self.members)

    def subscribed_topic_names(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def is_subscribed_to(self, topic: str) -> bool:
        return any(topic in m.subscribed_topic_names for m in self.members.values())

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        """The epoch of the member owning the partition, or -1 when nobody does."""
        return self.partition_epochs.get((topic_id, partition), -1)

    def set_member(self, member: ConsumerMember) -> None:
        """Adds or replaces a member, keeping the partition-epoch index in step."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
            if (old.subscribed_topic_names != member.subscribed_topic_names
                    or old.subscribed_topic_regex != member.subscribed_topic_regex):
                self.subscriptions_version += 1
        else:
            self._subscription_joined(member)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for tp in member.owned_partitions():
            self.partition_epochs[tp] = member.member_epoch

    def _subscription_joined(self, member: ConsumerMember) -> None:
        """A new member can only add to the union of the group's subscriptions: a current cache is extended
        rather than dropped, so that a burst of N joins does not rebuild it from every member N times
        (O(N²): a third of the broker's work in a 1,000-member join burst)."""
        cache = self.subscription_cache
        current = cache is not None and cache[0] == self.subscriptions_version
        self.subscriptions_version += 1
        if not current:
            return
        _, names, regexes = cache
        if not names.issuperset(member.subscribed_topic_names):
            names = names.union(member.subscribed_topic_names)
        if member.subscribed_topic_regex and member.subscribed_topic_regex not in regexes:
            regexes = regexes | {member.subscribed_topic_regex}
        self.subscription_cache = (self.subscriptions_version, names, regexes)

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self.subscriptions_version += 1
            self._release(member)
            if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
                del self.static_members[member.instance_id]
        return member

    def _release(self, member: ConsumerMember) -> None:
        for tp in member.owned_partitions():
            if self.partition_epochs.get(tp) == member.member_epoch:
                del self.partition_epochs[tp]
