"""Kafka's SimpleAssignor for share groups (its homogeneous and heterogeneous builders).

A partition may go to several members: each partition is shared by ``desired_sharing`` members
(ceil(members / partitions)), and each member is given its share of the partitions, keeping what it had
where it may. Kafka iterates Java hash maps where this walks partitions in (topic, partition) order and
members in join order, so with more than one member the same counts and sharing may land on other
members than Kafka's — what a member can observe (how many partitions, none held twice unless there are
more members than partitions) is the same.
"""

from __future__ import annotations

import math
import uuid
from typing import Mapping

from groupcoord.coordinator.groups.share.member import Assignment

TopicPartition = tuple[uuid.UUID, int]


def _desired_counts(desired_sharing: int, num_partitions: int, num_members: int) -> list[int]:
    precise = desired_sharing * num_partitions / num_members if num_members else 0.0
    return [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(num_members)]


def _copy(a: Mapping[uuid.UUID, frozenset[int] | set[int]]) -> dict[uuid.UUID, set[int]]:
    return {t: set(ps) for t, ps in a.items()}


def assign(members: Mapping[str, frozenset[uuid.UUID]], current: Mapping[str, Assignment],
           assignable: Mapping[uuid.UUID, list[int]]) -> dict[str, Assignment]:
    """``members``: member id -> subscribed topic ids (those that exist); ``current``: the target assignment
    now; ``assignable``: topic id -> its assignable (initialised) partitions. Returns every member's target."""
    if not members:
        return {}
    subs = set(members.values())
    if len(subs) == 1:
        result = _homogeneous(members, current, assignable)
    else:
        result = _heterogeneous(members, current, assignable)
    return {m: {t: frozenset(ps) for t, ps in a.items() if ps} for m, a in result.items()}


def _homogeneous(members, current, assignable) -> dict[str, dict[uuid.UUID, set[int]]]:
    member_ids = list(members)
    n = len(member_ids)
    subscribed = next(iter(members.values()))
    if not subscribed:
        return {m: {} for m in member_ids}
    targets: list[TopicPartition] = [(t, p) for t in sorted(subscribed, key=str) for p in assignable.get(t, ())]
    sharing = 0 if not targets else (n + len(targets) - 1) // len(targets)
    desired = _desired_counts(sharing, len(targets), n)
    old = {i: {t: set(ps) for t, ps in current.get(m, {}).items()} for i, m in enumerate(member_ids)}
    new: dict[int, dict[uuid.UUID, set[int]]] = {}
    by_partition: dict[TopicPartition, list[int]] = {}
    by_member: dict[int, list[TopicPartition]] = {}
    unfilled: list[int] = []
    overfilled: list[int] = []

    # revokeUnassignablePartitions
    for i in range(n):
        count = 0
        for t, ps in old[i].items():
            if t in subscribed:
                for p in sorted(ps):
                    count += 1
                    by_partition.setdefault((t, p), []).append(i)
                    by_member.setdefault(i, []).append((t, p))
                    if count >= desired[i] and i not in new:
                        new[i] = _copy(old[i])
            else:
                new.setdefault(i, _copy(old[i])).pop(t, None)
        if count < desired[i]:
            unfilled.append(i)
        elif count > desired[i]:
            overfilled.append(i)
    # revokeOverfilledMembers
    for i in overfilled:
        held = by_member[i]
        while len(held) > desired[i]:
            t, p = held.pop(0)
            new[i][t].discard(p)
            by_partition[(t, p)].remove(i)
    # revokeOversharedPartitions
    for tp, holders in by_partition.items():
        for i in list(holders):
            if len(holders) <= sharing:
                break
            a = new.setdefault(i, _copy(old[i]))
            if tp[1] in a.get(tp[0], set()):
                a[tp[0]].discard(tp[1])
                holders.remove(i)
                by_member[i].remove(tp)
                if i not in unfilled:
                    unfilled.append(i)
    for tp in targets:
        by_partition.setdefault(tp, [])
    # assignRemainingPartitions
    _fill(by_partition, unfilled, sharing, desired, by_member, lambda i: new.setdefault(i, _copy(old[i])))
    return {m: (new[i] if i in new else old[i]) for i, m in enumerate(member_ids)}


def _fill(by_partition, unfilled: list[int], sharing: int, desired: list[int], by_member, assignment_of) -> None:
    """Kafka's assignRemainingPartitions: partitions short of their sharing go round the unfilled members."""
    if not unfilled:
        return
    pos = 0
    assigned_this_round = False
    for (t, p), holders in by_partition.items():
        to_make = sharing - len(holders)
        while to_make > 0 and unfilled:
            if pos >= len(unfilled):
                if not assigned_this_round:
                    break
                pos, assigned_this_round = 0, False
            i = unfilled[pos]
            if i in holders:
                pos += 1
                continue
            assignment_of(i).setdefault(t, set()).add(p)
            by_member.setdefault(i, []).append((t, p))
            holders.append(i)
            to_make -= 1
            assigned_this_round = True
            if len(by_member[i]) >= desired[i]:
                unfilled.pop(pos)
            else:
                pos += 1
        if not unfilled:
            break


def _heterogeneous(members, current, assignable) -> dict[str, dict[uuid.UUID, set[int]]]:
    member_ids = list(members)
    index = {m: i for i, m in enumerate(member_ids)}
    all_topics = sorted(set().union(*members.values()), key=str)
    old = {i: {t: set(ps) for t, ps in current.get(m, {}).items()} for i, m in enumerate(member_ids)}
    new: dict[int, dict[uuid.UUID, set[int]]] = {}
    for topic in all_topics:
        subscribers = [index[m] for m in member_ids if topic in members[m]]
        targets = list(assignable.get(topic, ()))
        sharing = 0 if not targets else (len(subscribers) + len(targets) - 1) // len(targets)
        desired = [0] * len(member_ids)
        for k, c in enumerate(_desired_counts(sharing, len(targets), len(subscribers))):
            desired[subscribers[k]] = c
        by_partition: dict[tuple[uuid.UUID, int], list[int]] = {}
        by_member: dict[int, list[tuple[uuid.UUID, int]]] = {}
        for i in range(len(member_ids)):
            held = old[i].get(topic)
            if held is None or not old[i]:
                continue
            for p in sorted(held):
                by_partition.setdefault((topic, p), []).append(i)
                by_member.setdefault(i, []).append((topic, p))
        for i, held in by_member.items():
            while len(held) > desired[i]:
                tp = held.pop(0)
                by_partition[tp].remove(i)
                new.setdefault(i, _copy(old[i]))[topic].discard(tp[1])
        for tp, holders in by_partition.items():
            for i in list(holders):
                if len(holders) <= sharing:
                    break
                a = new.setdefault(i, _copy(old[i]))
                if tp[1] in a.get(topic, set()):
                    a[topic].discard(tp[1])
                    holders.remove(i)
                    by_member[i].remove(tp)
        for p in targets:
            by_partition.setdefault((topic, p), [])
        unfilled = [i for i in subscribers if len(by_member.get(i, ())) < desired[i]]
        _fill(by_partition, unfilled, sharing, desired, by_member, lambda i: new.setdefault(i, _copy(old[i])))
    # Topics nobody subscribes to any more drop out of every member's assignment.
    for i in range(len(member_ids)):
        a = new.get(i, old[i])
        stale = [t for t in a if t not in members[member_ids[i]]]
        if stale:
            a = new.setdefault(i, _copy(old[i]))
            for t in stale:
                a.pop(t, None)
    return {m: (new[i] if i in new else old[i]) for i, m in enumerate(member_ids)}
