"""KIP-848 static members (KIP-345 rules): a temporary leave keeps the partitions for the instance's next member."""

import pytest

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id

ORDERS = topic_id("orders")


@pytest.fixture
def h() -> Harness:
    return Harness(FakeTopics(orders=4))


def err(r):
    return r["error_code"], r["error_message"]


def test_a_static_member_that_leaves_temporarily_is_replaced_with_its_assignment(h):
    h.cg_join("g", "a1", instance="inst-a")
    h.cg_join("g", "b", topics=("orders",))
    kept = sorted(h.cg("g", "a1", 2, instance="inst-a")["assignment"]["topic_partitions"][0]["partitions"])
    h.cg("g", "a1", 2, instance="inst-a", owned={"orders": kept})
    h.cg("g", "b", 3)
    r = h.cg("g", "a1", -2, instance="inst-a")
    assert (r["error_code"], r["member_id"], r["member_epoch"]) == (ErrorCode.none, "a1", -2)
    group = h.cg_group("g")
    assert group.members["a1"].member_epoch == -2
    assert group.group_epoch == 3  # a temporary leave does not rebalance
    # The instance comes back under a new member id and gets the same partitions at once.
    r = h.cg_join("g", "a2", instance="inst-a")
    assert r["error_code"] == ErrorCode.none and r["member_epoch"] == 3
    assert sorted(r["assignment"]["topic_partitions"][0]["partitions"]) == kept
    assert set(group.members) == {"a2", "b"} and group.static_members == {"inst-a": "a2"}
    assert group.group_epoch == 3


def test_static_member_errors(h):
    h.cg_join("g", "a1", instance="inst-a")
    assert err(h.cg_join("g", "a2", instance="inst-a")) == (
        ErrorCode.unreleased_instance_id,
        "Static member a2 with instance id inst-a cannot join the group because the instance id is owned by a1 member.")
    assert err(h.cg("g", "a2", 2, instance="inst-a")) == (
        ErrorCode.fenced_instance_id, "Static member a2 with instance id inst-a was fenced by member a1.")
    assert err(h.cg("g", "a1", 2, instance="inst-x")) == (ErrorCode.unknown_member_id, "Instance id inst-x is unknown.")
    assert err(h.cg("g", "a2", -2, instance="inst-a")) == (
        ErrorCode.fenced_instance_id, "Static member a2 with instance id inst-a was fenced by member a1.")
    assert err(h.cg("g", "a1", -1, instance="inst-x")) == (ErrorCode.unknown_member_id, "Instance id inst-x is unknown.")


def test_a_static_member_leaving_for_good_rebalances(h):
    h.cg_join("g", "a1", instance="inst-a")
    r = h.cg("g", "a1", -1, instance="inst-a")
    assert (r["error_code"], r["member_epoch"]) == (ErrorCode.none, -1)
    assert h.cg_group("g").members == {} and h.cg_group("g").static_members == {}
    assert h.cg_group("g").group_epoch == 3


def test_a_static_member_away_for_longer_than_its_session_is_removed(h):
    h.cg_join("g", "a1", instance="inst-a")
    h.cg("g", "a1", -2, instance="inst-a")
    h.advance(45_001)
    assert h.cg_group("g").members == {}
    assert h.cg_join("g", "a2", instance="inst-a")["member_epoch"] == 4


def test_static_membership_survives_a_restart(h):
    h.cg_join("g", "a1", instance="inst-a")
    h.cg("g", "a1", -2, instance="inst-a")
    h.restart()
    assert h.cg_group("g").static_members == {"inst-a": "a1"}
    assert h.cg_group("g").members["a1"].member_epoch == -2
    r = h.cg_join("g", "a2", instance="inst-a")
    assert r["error_code"] == ErrorCode.none
    assert sorted(r["assignment"]["topic_partitions"][0]["partitions"]) == [0, 1, 2, 3]
