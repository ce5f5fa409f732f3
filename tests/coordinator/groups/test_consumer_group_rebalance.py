"""KIP-848 consumer groups: joins, the split of partitions, revocation before reassignment, leaves."""

import pytest

from groupcoord.coordinator.groups.consumer.member import MemberState
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id

ORDERS = topic_id("orders")


@pytest.fixture
def h() -> Harness:
    return Harness(FakeTopics(orders=6, payments=2))


def assigned(response: dict) -> dict:
    """{topic id: sorted partitions} of a heartbeat answer (None when the answer carries no assignment)."""
    if response["assignment"] is None:
        return None
    return {tp["topic_id"]: sorted(tp["partitions"]) for tp in response["assignment"]["topic_partitions"]}


def owned(partitions) -> dict:
    return {"orders": list(partitions)}


def test_the_first_member_gets_every_partition_at_group_epoch_two(h):
    """A new group starts at epoch 1 (Kafka 4.3's ModernGroup), so its first member joins at epoch 2."""
    r = h.cg_join("g", "m1")
    assert r["error_code"] == ErrorCode.none
    assert (r["member_id"], r["member_epoch"]) == ("m1", 2)
    assert r["heartbeat_interval"] == 5000
    assert assigned(r) == {ORDERS: [0, 1, 2, 3, 4, 5]}
    group = h.cg_group("g")
    assert (group.group_epoch, group.assignment_epoch, group.state.value) == (2, 2, "Stable")


def test_two_members_split_the_partitions_after_the_first_revokes(h):
    h.cg_join("g", "m1")
    r2 = h.cg_join("g", "m2")
    # m2 is at epoch 3 but gets nothing yet: m1 still owns everything.
    assert r2["member_epoch"] == 3
    assert assigned(r2) == {}
    assert h.cg_group("g").members["m2"].state is MemberState.UNRELEASED_PARTITIONS
    assert h.cg_group("g").state.value == "Reconciling"
    # m1 is told to keep half of them, staying at epoch 2 until it has revoked the others.
    r1 = h.cg("g", "m1", 2)
    assert r1["member_epoch"] == 2
    kept = assigned(r1)[ORDERS]
    assert len(kept) == 3
    assert h.cg_group("g").members["m1"].state is MemberState.UNREVOKED_PARTITIONS
    # m2 still waits: the partitions are not released yet.
    assert assigned(h.cg("g", "m2", 3)) is None
    # m1 acknowledges by heartbeating with only what it kept: it moves to epoch 3.
    r1 = h.cg("g", "m1", 2, owned=owned(kept))
    assert r1["member_epoch"] == 3
    # m2 gets the released half.
    r2 = h.cg("g", "m2", 3)
    assert sorted(assigned(r2)[ORDERS]) == sorted(set(range(6)) - set(kept))
    assert h.cg_group("g").state.value == "Stable"


def form_two(h):
    h.cg_join("g", "m1")
    h.cg_join("g", "m2")
    kept = assigned(h.cg("g", "m1", 2))[ORDERS]
    h.cg("g", "m1", 2, owned=owned(kept))
    rest = assigned(h.cg("g", "m2", 3))[ORDERS]
    return kept, rest


def test_a_third_member_gets_partitions_only_after_the_others_revoke(h):
    kept1, kept2 = form_two(h)
    r3 = h.cg_join("g", "m3")
    assert r3["member_epoch"] == 4 and assigned(r3) == {}
    group = h.cg_group("g")
    # Nobody owns a partition another member owns, at every step.
    def no_double_owner():
        seen = {}
        for m in group.members.values():
            for tp in m.owned_partitions():
                assert tp not in seen, (tp, seen[tp], m.member_id)
                seen[tp] = m.member_id
    r1 = h.cg("g", "m1", 3)
    new1 = assigned(r1)[ORDERS]
    assert len(new1) == 2 and set(new1) <= set(kept1)
    no_double_owner()
    r3 = h.cg("g", "m3", 4)
    assert r3["assignment"] is None  # still nothing released
    h.cg("g", "m1", 3, owned=owned(new1))
    no_double_owner()
    r3 = h.cg("g", "m3", 4)
    assert len(assigned(r3)[ORDERS]) == 1  # only what m1 released so far
    r2 = h.cg("g", "m2", 3)
    new2 = assigned(r2)[ORDERS]
    h.cg("g", "m2", 3, owned=owned(new2))
    r3 = h.cg("g", "m3", 4)
    assert len(assigned(r3)[ORDERS]) == 2
    no_double_owner()
    assert group.state.value == "Stable"
    assert {m.member_epoch for m in group.members.values()} == {4}


def test_a_member_leaving_hands_its_partitions_to_the_others(h):
    kept1, kept2 = form_two(h)
    r = h.cg("g", "m2", -1)
    assert (r["error_code"], r["member_id"], r["member_epoch"]) == (ErrorCode.none, "m2", -1)
    group = h.cg_group("g")
    assert "m2" not in group.members and group.group_epoch == 4
    assert group.state.value == "Assigning"
    r1 = h.cg("g", "m1", 3)
    assert r1["member_epoch"] == 4
    assert assigned(r1) == {ORDERS: [0, 1, 2, 3, 4, 5]}


def test_the_last_member_leaving_leaves_an_empty_group(h):
    h.cg_join("g", "m1")
    h.cg("g", "m1", -1)
    assert h.cg_group("g").state.value == "Empty"


def test_the_range_assignor_gives_contiguous_ranges(h):
    h.cg_join("g", "a", assignor="range")
    h.cg_join("g", "b", assignor="range")
    target = h.cg_group("g").target
    assert target["a"] == {ORDERS: frozenset({0, 1, 2})}
    assert target["b"] == {ORDERS: frozenset({3, 4, 5})}


def test_members_subscribed_to_different_topics_get_only_their_topics(h):
    h.cg_join("g", "a", topics=("orders",))
    h.cg_join("g", "b", topics=("orders", "payments"))
    target = h.cg_group("g").target
    assert set(target["a"]) == {ORDERS}
    assert target["b"][topic_id("payments")] == frozenset({0, 1})
    total = sum(len(ps) for a in target.values() for ps in a.values())
    assert total == 8
    assert abs(sum(len(p) for p in target["a"].values()) - sum(len(p) for p in target["b"].values())) <= 1


def test_an_assignment_is_sent_only_when_it_changed_or_the_request_is_full(h):
    h.cg_join("g", "m1")
    assert h.cg("g", "m1", 2)["assignment"] is None
    full = h.cg("g", "m1", 2, topics=("orders",), owned=owned(range(6)), rebalance=30_000)
    assert assigned(full) == {ORDERS: [0, 1, 2, 3, 4, 5]}


def test_a_new_topic_partition_count_bumps_the_group_epoch(h):
    h.cg_join("g", "m1")
    h.topics.partitions["orders"] = 8
    r = h.cg("g", "m1", 2)
    assert r["member_epoch"] == 3
    assert assigned(r) == {ORDERS: list(range(8))}


def test_regex_subscriptions_resolve_against_the_topic_catalog(h):
    r = h.cg("g", "m1", 0, topics=None, regex="pay.*", owned={}, rebalance=30_000)
    assert assigned(r) == {topic_id("payments"): [0, 1]}


def test_an_empty_regex_means_no_regex(h):
    r = h.cg("g", "m1", 0, topics=("orders",), regex="", owned={}, rebalance=30_000)
    assert r["error_code"] == ErrorCode.none
    assert h.cg_group("g").members["m1"].subscribed_topic_regex == ""
    assert assigned(r) == {ORDERS: [0, 1, 2, 3, 4, 5]}


def test_dropping_a_topic_revokes_its_partitions_at_once_and_resubscribing_gets_them_back():
    h = Harness(FakeTopics(orders=2, payments=2))
    payments = topic_id("payments")
    h.cg_join("g", "m1", topics=("orders", "payments"))
    r = h.cg("g", "m1", 2, topics=("orders",))
    assert r["member_epoch"] == 2  # still revoking: it keeps its epoch
    assert assigned(r) == {ORDERS: [0, 1]}
    member = h.cg_group("g").members["m1"]
    assert member.state is MemberState.UNREVOKED_PARTITIONS and member.pending_revocation == {payments: frozenset({0, 1})}
    # Subscribing again while it still holds them: they are its own, so not "unreleased".
    r = h.cg("g", "m1", 2, topics=("orders", "payments"), owned={"orders": [0, 1]})
    assert r["member_epoch"] == 4
    assert assigned(r) == {ORDERS: [0, 1], payments: [0, 1]}
    assert h.cg_group("g").members["m1"].state is MemberState.STABLE


def test_a_member_in_an_unknown_state_is_fenced_unless_it_rejoins_empty(h):
    h.cg_join("g", "m1")
    h.cg_group("g").members["m1"].state = MemberState.UNKNOWN  # as if written by a newer coordinator
    r = h.cg("g", "m1", 2)
    assert (r["error_code"], r["error_message"]) == (
        ErrorCode.fenced_member_epoch,
        "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.")
