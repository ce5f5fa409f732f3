"""Moves a member towards its target assignment, as Kafka's CurrentAssignmentBuilder does.

The rule that keeps a partition from having two owners: a member first revokes
what it must give up (UNREVOKED_PARTITIONS, staying in its epoch), and a
partition still owned by another member is withheld (UNRELEASED_PARTITIONS)
until that member has released it.
"""

from __future__ import annotations

import uuid
from typing import Callable

from coordinator.groups.consumer.member import Assignment, ConsumerMember, MemberState, normalize

PartitionEpoch = Callable[[uuid.UUID, int], int]


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
) -> ConsumerMember:
    """The member's next state (a new object; the input is not changed)."""
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _compute(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        return _compute(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
    if member.state is MemberState.UNRELEASED_PARTITIONS:
        return _compute(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
    raise ValueError(f"member {member.member_id} is in an unknown state")


def _compute(
    member: ConsumerMember,
    member_epoch: int,
    target_epoch: int,
    target: Assignment,
    partition_epoch: PartitionEpoch,
    owned: Assignment | None,
) -> ConsumerMember:
    keep: dict[uuid.UUID, set[int]] = {}
    revoke: dict[uuid.UUID, set[int]] = {}
    add: dict[uuid.UUID, set[int]] = {}
    unreleased = False
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, frozenset())
        current = member.assigned.get(topic_id, frozenset())
        keep[topic_id] = set(current & wanted)
        revoke[topic_id] = set(current - wanted)
        for p in sorted(wanted - current):
            epoch = partition_epoch(topic_id, p)
            if epoch == -1:
                add.setdefault(topic_id, set()).add(p)
            else:
                unreleased = True
    keep_a, revoke_a, add_a = normalize(keep), normalize(revoke), normalize(add)
    out = _copy(member)
    if revoke_a and _owns_any(owned, revoke_a):
        out.state = MemberState.UNREVOKED_PARTITIONS
        out.previous_member_epoch, out.member_epoch = member.member_epoch, member_epoch
        out.assigned, out.pending_revocation = keep_a, revoke_a
        return out
    assigned = dict(keep_a)
    for t, ps in add_a.items():
        assigned[t] = assigned.get(t, frozenset()) | ps
    out.state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    out.previous_member_epoch, out.member_epoch = member.member_epoch, target_epoch
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
