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

from coordinator.groups.consumer.member import Assignment

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

    Fair share is computed over all partitions for homogeneous subscriptions; for
    heterogeneous ones, partitions go to the least loaded subscribed member and
    are then moved from the most to the least loaded member while that narrows
    the gap by more than one partition.
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
        subscribed = [(t, p) for t, p in all_partitions if t in ordered[0].topics]
        quota, extra = divmod(len(subscribed), len(ordered))
        # Members keep up to quota (+1 while extra slots remain) of the partitions they hold, in sorted order.
        for m in ordered:
            for t in sorted(m.current, key=str):
                for p in sorted(m.current[t]):
                    tp = (t, p)
                    if t not in partitions or p >= partitions[t] or t not in m.topics or tp in owner:
                        continue
                    if load[m.member_id] < quota or (load[m.member_id] == quota and extra > 0):
                        if load[m.member_id] == quota:
                            extra -= 1
                        give(m.member_id, tp)
        for tp in subscribed:
            if tp in owner:
                continue
            target = next(
                (m for m in ordered if load[m.member_id] < quota),
                None,
            )
            if target is None:
                target = next(m for m in ordered if load[m.member_id] == quota and extra > 0)
                extra -= 1
            give(target.member_id, tp)
        return _freeze(result)

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
