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

from groupcoord.coordinator.groups.consumer.member import Assignment
from groupcoord.protocol.frozen import frozen_dataclass

UNIFORM = "uniform"
RANGE = "range"
SUPPORTED = (UNIFORM, RANGE)  # Kafka's group.consumer.assignors default order: the first is the default


@frozen_dataclass
class MemberSpec:
    """What an assignor knows of a member: its id, subscribed topic ids and current assignment."""
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
    if not members:
        return {}
    ordered = sorted(members, key=lambda m: m.member_id)
    if len({m.topics for m in ordered}) == 1:
        return _uniform_homogeneous(ordered, partitions)
    result = _empty(members)
    all_partitions = [(t, p) for t in sorted(partitions, key=str) for p in range(partitions[t])]
    load = {m.member_id: 0 for m in ordered}
    owner: dict[tuple[uuid.UUID, int], str] = {}

    def give(member_id: str, tp: tuple[uuid.UUID, int]) -> None:
        result[member_id].setdefault(tp[0], set()).add(tp[1])
        load[member_id] += 1
        owner[tp] = member_id

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
    return uniform_homogeneous([m.member_id for m in ordered], ordered[0].topics,
                               {m.member_id: m.current for m in ordered}, partitions)


def uniform_homogeneous(member_ids: list[str], subscribed: frozenset[uuid.UUID], current: dict[str, Assignment],
                        partitions: dict[uuid.UUID, int]) -> dict[str, Assignment]:
    """Kafka's UniformHomogeneousAssignmentBuilder, visiting members by id (``member_ids`` sorted) and topics
    by id; every member subscribes to ``subscribed`` and holds ``current[member_id]`` (absent: nothing).

    Each member in turn gets the quota (the first ``total % members`` of them one
    more), keeps what it holds up to it, and releases the rest; the partitions
    nobody holds then fill the members below their quota, in order.

    It runs on every epoch bump of a group (a join of 1,000 members is 1,000 runs over 1,000 members), so
    a member whose holding is within its quota costs a few C-level calls and gets its very ``current``
    object back (the caller tells an unchanged target by identity, without comparing or re-encoding it);
    only members above their quota, and those below it, are worked out partition by partition.
    """
    text = {t: str(t) for t in partitions}
    topics = sorted((t for t in subscribed if t in partitions), key=text.__getitem__)
    if not topics:
        return {mid: {} for mid in member_ids}
    # Keyed by the UUID's int: a UUID's own __hash__ is Python code, and these lookups run per member.
    limits = {t.int: partitions[t] for t in topics}
    held: dict[int, set[int]] = {t.int: set() for t in topics}
    for assignment in current.values():
        for t, ps in assignment.items():
            into = held.get(t.int)
            if into is not None:
                into |= ps
    unassigned = [(t, p) for t in topics for p in sorted(set(range(partitions[t])) - held[t.int])]
    total = sum(partitions[t] for t in topics)
    minimum, extra = divmod(total, len(member_ids))
    result: dict[str, Assignment] = {}
    unfilled: list[tuple[str, int]] = []
    empty: Assignment = {}
    for mid in member_ids:
        quota = minimum
        if extra > 0:
            quota, extra = quota + 1, extra - 1
        mine = current.get(mid) or empty
        # The common case: every topic held is still subscribed and exists, every partition number is in
        # range, and the holding is within the quota: it is kept as it is (the same object).
        count = 0
        clean = True
        for t, ps in mine.items():
            limit = limits.get(t.int)
            if limit is None or not ps or max(ps) >= limit:
                clean = False
                break
            count += len(ps)
        if clean and count <= quota:
            result[mid] = mine
            if quota > count:
                unfilled.append((mid, quota - count))
            continue
        kept: dict[uuid.UUID, frozenset[int]] = {}
        order = mine if len(mine) <= 1 else sorted(mine, key=lambda t: text.get(t) or str(t))
        for t in order:
            if t.int not in limits:
                continue  # no longer subscribed (or gone): the whole topic goes
            count = limits[t.int]
            ps = sorted(p for p in mine[t] if p < count)
            if len(ps) <= quota:
                quota -= len(ps)
                if ps:
                    kept[t] = frozenset(ps)
                continue
            if quota > 0:
                kept[t] = frozenset(ps[:quota])
            unassigned.extend((t, p) for p in ps[quota:])
            quota = 0
        result[mid] = kept
        if quota > 0:
            unfilled.append((mid, quota))
    index = 0
    for mid, quota in unfilled:
        if index >= len(unassigned):
            break
        taken = unassigned[index:index + quota]
        index += len(taken)
        added: dict[uuid.UUID, list[int]] = {}
        for t, p in taken:
            added.setdefault(t, []).append(p)
        grown: dict[uuid.UUID, frozenset[int]] = dict(result[mid])
        for t, ps in added.items():
            grown[t] = grown[t].union(ps) if t in grown else frozenset(ps)
        result[mid] = grown
    return result
