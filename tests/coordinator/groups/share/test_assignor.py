"""Kafka's SimpleAssignor for share groups: every assignable partition goes to ceil(members / partitions)
members, members get balanced shares, and what a member held stays with it where the balance allows."""

from __future__ import annotations

import math
import uuid

from hypothesis import given, settings, strategies as st

from groupcoord.coordinator.groups.share.assignor import assign

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def holders(result, topic, partition) -> int:
    return sum(partition in a.get(topic, ()) for a in result.values())


@settings(max_examples=200, deadline=None)
@given(members=st.integers(1, 9), partitions=st.integers(0, 12))
def test_homogeneous_every_partition_shared_by_the_desired_number_of_members(members, partitions):
    ids = [f"m{i}" for i in range(members)]
    result = assign({m: frozenset({T1}) for m in ids}, {}, {T1: list(range(partitions))})
    assert set(result) == set(ids)
    if partitions == 0:
        assert all(not a for a in result.values())
        return
    sharing = math.ceil(members / partitions)
    assert all(holders(result, T1, p) == sharing for p in range(partitions))
    counts = sorted(len(a.get(T1, ())) for a in result.values())
    assert counts[-1] - counts[0] <= 1


@settings(max_examples=100, deadline=None)
@given(members=st.integers(1, 6), extra=st.integers(1, 8))
def test_a_new_member_only_takes_partitions_the_others_give_up(members, extra):
    """With at least one partition per member (each partition held once), a member already there keeps as
    much of what it held as its new share allows (Kafka's desired counts are by member index, so a member's
    share may also grow)."""
    partitions = members + extra
    ids = [f"m{i}" for i in range(members)]
    before = assign({m: frozenset({T1}) for m in ids}, {}, {T1: list(range(partitions))})
    after = assign({m: frozenset({T1}) for m in ids + ["new"]}, before, {T1: list(range(partitions))})
    for m in ids:
        now, had = after[m].get(T1, frozenset()), before[m][T1]
        assert len(now & had) == min(len(had), len(now))
    assert all(holders(after, T1, p) == 1 for p in range(partitions))


def test_only_initialised_partitions_are_assigned():
    result = assign({"a": frozenset({T1})}, {}, {T1: [0, 2]})
    assert result == {"a": {T1: frozenset({0, 2})}}


def test_heterogeneous_subscriptions_assign_each_topic_among_its_subscribers():
    result = assign({"a": frozenset({T1}), "b": frozenset({T1, T2}), "c": frozenset({T2})}, {},
                    {T1: [0, 1, 2, 3], T2: [0, 1]})
    assert set(result["a"]) <= {T1} and set(result["c"]) <= {T2}
    assert all(holders(result, T1, p) == 1 for p in range(4))
    assert all(holders(result, T2, p) == 1 for p in range(2))
    assert len(result["a"][T1]) == 2 and len(result["b"][T1]) == 2


def test_a_topic_dropped_from_the_subscription_leaves_the_assignment():
    before = {"a": {T1: frozenset({0, 1}), T2: frozenset({0})}}
    result = assign({"a": frozenset({T2}), "b": frozenset({T1})}, before, {T1: [0, 1], T2: [0]})
    assert result["a"] == {T2: frozenset({0})}
    assert result["b"] == {T1: frozenset({0, 1})}
