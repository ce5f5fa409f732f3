"""Server-side assignors: ``uniform`` (Kafka's default) and ``range``.

Input: each member's subscribed topic ids and current target assignment; the
partition counts of the topics. Output: a new target assignment per member.

Both are deterministic (members and topics are visited in sorted order), so the
coordinator computes the same assignment from the same state. They follow the
*rules* of Kafka's assignors (balanced, sticky where the uniform assignor is
sticky; contiguous ranges co-partitioned by member order for range) but do not
promise to pick the very same partitions as Kafka's implementations.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from groupcoord.coordinator.groups.consumer.member import Assignment

UNIFORM = "uniform"
RANGE = "range"
SUPPORTED = (UNIFORM, RANGE)  # Kafka's group.consumer.assignors default order: the first is the default


@dataclass(frozen=True, slots=True)
class MemberSpec:
    member_id: str
    topics: frozenset[uuid.UUID]
    current: Assignment


def assign(name: str, members: list[MemberSpec], partitions: dict[uuid.UUID, int]) -> dict[str, Assignment]:
    if name == RANGE:
        return range_assign(members, partitions)
    return uniform_assign(members, partitions)


def _empty(members: list[MemberSpec]) -> dict[str, dict[uuid.UUID, set[int]]]:
    return {m.member_id: {} for m in members}


def _freeze(result: dict[str, dict[uuid.UUID, set[int]]]) -> dict[str, Assignment]:
    return {mid: {t: frozenset(ps) for t, ps in a.items() if ps} for mid, a in result.items()}


def range_assign(members: list[MemberSpec], partitions: dict[uuid.UUID, int]) -> dict[str, Assignment]:
    """Per topic, the subscribed members sorted by id get contiguous ranges; the first ones get one extra."""
    result = _empty(members)
    for topic_id in sorted(partitions, key=str):
        subscribed = sorted((m.member_id for m in members if topic_id in m.topics))
        if not subscribed:
            continue
        count = partitions[topic_id]
        quota, extra = divmod(count, len(subscribed))
        start = 0
        for i, member_id in enumerate(subscribed):
            n = quota + (1 if i < extra else 0)
            if n:
                result[member_id][topic_id] = set(range(start, start + n))
            start += n
    return _freeze(result)


def uniform_assign(members: list[MemberSpec], partitions: dict[uuid.UUID, int]) -> dict[str, Assignment]:
    """Balanced and sticky: members keep what they had while within their fair share, the rest is spread.

    Homogeneous subscriptions follow Kafka's UniformHomogeneousAssignmentBuilder
    step for step (see _uniform_homogeneous). For heterogeneous ones, members keep
    what they still subscribe to, the rest goes to the least loaded subscribed
    member, and partitions then move from the most to the least loaded member
    while that narrows the gap by more than one partition (Kafka's heterogeneous
    builder follows the same goals with a different algorithm).
    """
    result = _empty(members)
    if not members:
        return {}
    ordered = sorted(members, key=lambda m: m.member_id)
    homogeneous = len({m.topics for m in ordered}) == 1
    all_partitions = [(t, p) for t in sorted(partitions, key=str) for p in range(partitions[t])]
    load = {m.member_id: 0 for m in ordered}
    owner: dict[tuple[uuid.UUID, int], str] = {}

    def give(member_id: str, tp: tuple[uuid.UUID, int]) -> None:
        result[member_id].setdefault(tp[0], set()).add(tp[1])
        load[member_id] += 1
        owner[tp] = member_id

    if homogeneous:
        return _uniform_homogeneous(ordered, partitions)

    for m in ordered:  # heterogeneous: keep what is still subscribed and exists
        for t in sorted(m.current, key=str):
            for p in sorted(m.current[t]):
                if t in partitions and p < partitions[t] and t in m.topics and (t, p) not in owner:
                    give(m.member_id, (t, p))
    for tp in all_partitions:
        if tp in owner:
            continue
        candidates = [m for m in ordered if tp[0] in m.topics]
        if candidates:
            give(min(candidates, key=lambda m: (load[m.member_id], m.member_id)).member_id, tp)
    moved = True
    while moved:  # move from the most to the least loaded member that can take the partition
        moved = False
        for tp in sorted(owner, key=lambda x: (str(x[0]), x[1])):
            src = owner[tp]
            candidates = [m.member_id for m in ordered if tp[0] in m.topics and load[m.member_id] + 1 < load[src]]
            if candidates:
                dst = min(candidates, key=lambda mid: (load[mid], mid))
                result[src][tp[0]].discard(tp[1])
                load[src] -= 1
                give(dst, tp)
                moved = True
    return _freeze(result)


def _uniform_homogeneous(ordered: list[MemberSpec], partitions: dict[uuid.UUID, int]) -> dict[str, Assignment]:
    """Kafka's UniformHomogeneousAssignmentBuilder, visiting members by id and topics by id.

    Each member in turn gets the quota (the first ``total % members`` of them one
    more), keeps what it holds up to it, and releases the rest; the partitions
    nobody holds then fill the members below their quota, in order.

    It runs on every epoch bump of a group (a join of 1,000 members is 1,000 runs over 1,000 members), so it
    works per topic with one flag per partition and sorts topic ids by their text once, instead of building
    a (topic, partition) tuple and hashing a UUID for every partition of every member.
    """
    subscribed = ordered[0].topics
    text = {t: str(t) for t in partitions}
    topics = sorted((t for t in subscribed if t in partitions), key=text.__getitem__)
    if not topics:
        return {m.member_id: {} for m in ordered}
    held = {t: bytearray(partitions[t]) for t in topics}
    for m in ordered:
        for t, ps in m.current.items():
            flags = held.get(t)
            if flags is not None:
                count = len(flags)
                for p in ps:
                    if p < count:
                        flags[p] = 1
    unassigned = [(t, p) for t in topics for p, flag in enumerate(held[t]) if not flag]
    total = sum(partitions[t] for t in topics)
    minimum, extra = divmod(total, len(ordered))
    result: dict[str, dict[uuid.UUID, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for m in ordered:
        quota = minimum
        if extra > 0:
            quota, extra = quota + 1, extra - 1
        kept: dict[uuid.UUID, set[int]] = {}
        current = m.current
        order = current if len(current) <= 1 else sorted(current, key=lambda t: text.get(t) or str(t))
        for t in order:
            if t not in subscribed or t not in partitions:
                continue  # no longer subscribed (or gone): the whole topic goes
            count = partitions[t]
            ps = sorted(p for p in current[t] if p < count)
            if len(ps) <= quota:
                quota -= len(ps)
                if ps:
                    kept[t] = set(ps)
                continue
            if quota > 0:
                kept[t] = set(ps[:quota])
            unassigned.extend((t, p) for p in ps[quota:])
            quota = 0
        result[m.member_id] = kept
        if quota > 0:
            unfilled.append((m.member_id, quota))
    index = 0
    for member_id, quota in unfilled:
        for _ in range(quota):
            if index >= len(unassigned):
                break
            t, p = unassigned[index]
            index += 1
            result[member_id].setdefault(t, set()).add(p)
    return _freeze(result)
