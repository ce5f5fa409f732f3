"""The server-side assignors, on their own: Kafka's uniform (homogeneous) and range rules."""

import uuid

from groupcoord.coordinator.groups.consumer.assignors import MemberSpec, range_assign, uniform_assign

T = uuid.UUID(int=7)
U = uuid.UUID(int=9)


def spec(member_id, topics=(T,), **current):
    return MemberSpec(member_id, frozenset(topics), {t: frozenset(ps) for t, ps in current.get("current", {}).items()})


def test_uniform_gives_the_extra_partition_to_the_first_members_in_order():
    # Kafka's UniformHomogeneousAssignmentBuilder: quota first, stickiness within it. "a" comes first and gets
    # the extra slot, so it takes partition 2 that "b" has to release although the old split was balanced.
    out = uniform_assign([spec("a", current={T: {0}}), spec("b", current={T: {1, 2}})], {T: 3})
    assert out == {"a": {T: frozenset({0, 2})}, "b": {T: frozenset({1})}}


def test_uniform_is_sticky_within_the_quota():
    out = uniform_assign([spec("a", current={T: {3, 4, 5}}), spec("b", current={T: {0, 1, 2}}), spec("c")], {T: 6})
    assert out["a"] == {T: frozenset({3, 4})} and out["b"] == {T: frozenset({0, 1})}
    assert out["c"] == {T: frozenset({2, 5})}


def test_uniform_spreads_a_new_group_in_partition_order():
    out = uniform_assign([spec("a", (T, U)), spec("b", (T, U))], {T: 2, U: 2})
    assert out == {"a": {T: frozenset({0, 1})}, "b": {U: frozenset({0, 1})}}


def test_uniform_heterogeneous_keeps_members_on_their_topics_and_balances():
    out = uniform_assign([spec("a", (T,)), spec("b", (T, U))], {T: 4, U: 2})
    assert set(out["a"]) == {T}
    sizes = sorted(sum(len(p) for p in a.values()) for a in out.values())
    assert sizes == [3, 3]


def test_range_gives_contiguous_ranges_by_member_id():
    out = range_assign([spec("b"), spec("a"), spec("c")], {T: 7})
    assert out == {"a": {T: frozenset({0, 1, 2})}, "b": {T: frozenset({3, 4})}, "c": {T: frozenset({5, 6})}}
