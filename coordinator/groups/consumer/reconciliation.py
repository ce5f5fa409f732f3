"""Moves a member towards its target assignment, as Kafka 4.x's CurrentAssignmentBuilder does.

The rule that keeps a partition from having two owners: a member first revokes
what it must give up (UNREVOKED_PARTITIONS, staying in its epoch), and a
partition still owned by another member is withheld (UNRELEASED_PARTITIONS)
until that member has released it. A member that drops topics from its
subscription gives their partitions up at once, without waiting for a new
target assignment.
"""

from __future__ import annotations

import uuid
from typing import Callable

from groupcoord.coordinator.groups.consumer.member import Assignment, ConsumerMember, MemberState, normalize

PartitionEpoch = Callable[[uuid.UUID, int], int]


class UnknownMemberState(Exception):
    """A member in a state this coordinator does not know (written by a newer one): Kafka fences it."""


def _copy(member: ConsumerMember) -> ConsumerMember:
    return ConsumerMember(**{f: getattr(member, f) for f in member.__slots__})


def _owns_any(owned: Assignment | None, revoking: Assignment) -> bool:
    """Kafka's ownsRevokedPartitions: without the owned list the member is assumed to still own them."""
    if owned is None:
        return True
    return any(owned.get(t, frozenset()) & ps for t, ps in revoking.items())


def next_assignment(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: Assignment | None,
    subscribed: frozenset[uuid.UUID],
    subscription_changed: bool = False,
) -> ConsumerMember:
    """The member's next state (a new object, or the member itself when nothing moves)."""
    step = _Step(member, target_epoch, target, partition_epoch, owned, subscribed)
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return step.compute(member.member_epoch)
        if subscription_changed:
            return step.drop_unsubscribed()
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return step.drop_unsubscribed() if subscription_changed else member
        return step.compute(member.member_epoch)
    if member.state is MemberState.UNRELEASED_PARTITIONS:
        return step.compute(member.member_epoch)
    if owned is None or owned:
        raise UnknownMemberState("The consumer group member is in a unknown state. "
                                 "The member must abandon all its partitions and rejoin.")
    return step.compute(target_epoch)


class _Step:
    def __init__(self, member, target_epoch, target, partition_epoch, owned, subscribed) -> None:
        self.member, self.target_epoch, self.target = member, target_epoch, target
        self.partition_epoch, self.owned, self.subscribed = partition_epoch, owned, subscribed

    def drop_unsubscribed(self) -> ConsumerMember:
        """Kafka's updateCurrentAssignment: partitions of topics no longer subscribed go to pending revocation."""
        m = self.member
        if not self.subscribed and not m.pending_revocation:
            assigned: Assignment = {}
            revoking = dict(m.assigned)
        else:
            assigned = {t: ps for t, ps in m.assigned.items() if t in self.subscribed}
            revoking = dict(m.pending_revocation)
            for t, ps in m.assigned.items():
                if t not in self.subscribed:
                    revoking[t] = revoking.get(t, frozenset()) | ps
        if assigned == m.assigned:
            return m
        out = _copy(m)
        out.previous_member_epoch, out.member_epoch = m.member_epoch, m.member_epoch
        out.assigned = normalize(assigned)
        if revoking and _owns_any(self.owned, revoking):
            out.state, out.pending_revocation = MemberState.UNREVOKED_PARTITIONS, normalize(revoking)
        return out

    def compute(self, member_epoch: int) -> ConsumerMember:
        """Kafka's computeNextAssignment."""
        m = self.member
        keep: dict[uuid.UUID, set[int]] = {}
        revoke: dict[uuid.UUID, set[int]] = {}
        add: dict[uuid.UUID, set[int]] = {}
        unreleased = False
        for topic_id in set(self.target) | set(m.assigned):
            wanted = self.target.get(topic_id, frozenset()) if topic_id in self.subscribed else frozenset()
            current = m.assigned.get(topic_id, frozenset())
            keep[topic_id] = set(current & wanted)
            revoke[topic_id] = set(current - wanted)
            own_revoking = m.pending_revocation.get(topic_id, frozenset())
            for p in sorted(wanted - current):
                # Free, or still held by this very member as a partition pending revocation.
                if self.partition_epoch(topic_id, p) == -1 or p in own_revoking:
                    add.setdefault(topic_id, set()).add(p)
                else:
                    unreleased = True
        keep_a, revoke_a, add_a = normalize(keep), normalize(revoke), normalize(add)
        out = _copy(m)
        if revoke_a and _owns_any(self.owned, revoke_a):
            out.state = MemberState.UNREVOKED_PARTITIONS
            out.previous_member_epoch, out.member_epoch = m.member_epoch, member_epoch
            out.assigned, out.pending_revocation = keep_a, revoke_a
            return out
        assigned = dict(keep_a)
        for t, ps in add_a.items():
            assigned[t] = assigned.get(t, frozenset()) | ps
        out.state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        out.previous_member_epoch, out.member_epoch = m.member_epoch, self.target_epoch
        out.assigned, out.pending_revocation = normalize(assigned), {}
        return out


def same_assignment_state(a: ConsumerMember, b: ConsumerMember) -> bool:
    return (
        a.member_epoch == b.member_epoch
        and a.previous_member_epoch == b.previous_member_epoch
        and a.state is b.state
        and a.assigned == b.assigned
        and a.pending_revocation == b.pending_revocation
    )
