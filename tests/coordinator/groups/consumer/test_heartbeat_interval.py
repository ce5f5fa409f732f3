"""The heartbeat interval a KIP-848 member is told (coordinator/groups/consumer/heartbeat.heartbeat_interval_ms).

A member that has its new epoch but waits for partitions another member still owns (UNRELEASED_PARTITIONS) is
told group.consumer.unreleased.heartbeat.interval.ms (default 100 ms) so that a Java consumer, which waits its
timer in that state, comes back soon after they are released; every other answer carries the group's interval,
and the setting at 0 gives Kafka's answers throughout. Epochs and assignments are the same either way."""

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.groups.consumer.member import MemberState
from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id

ORDERS = topic_id("orders")
GROUP_INTERVAL = 5000  # the Harness's group.consumer.heartbeat.interval.ms (Kafka's default)


def assigned(response: dict) -> list[int] | None:
    if response["assignment"] is None:
        return None
    return sorted(p for tp in response["assignment"]["topic_partitions"] for p in tp["partitions"])


def story(h: Harness) -> dict[str, dict]:
    """m1 owns the 6 partitions; m2 joins and waits for the 3 m1 must give up; m1 is told to revoke them,
    m2 asks again while they are still m1's, m1 acknowledges, m2 asks again and gets them. Every answer, by step."""
    steps = {"m1 joins": h.cg_join("g", "m1")}
    steps["m2 joins"] = h.cg_join("g", "m2")
    steps["m1 told to revoke"] = h.cg("g", "m1", 2)
    steps["m2 still waits"] = h.cg("g", "m2", 3)
    kept = assigned(steps["m1 told to revoke"])
    steps["m1 acknowledges"] = h.cg("g", "m1", 2, owned={"orders": kept})
    steps["m2 gets its partitions"] = h.cg("g", "m2", 3)
    steps["m2 acknowledges"] = h.cg("g", "m2", 3, owned={"orders": assigned(steps["m2 gets its partitions"])})
    return steps


def test_the_short_interval_is_a_documented_setting_of_ours_at_100_ms():
    assert BrokerConfig().group_consumer_unreleased_heartbeat_interval_ms == 100


def test_a_member_waiting_for_unreleased_partitions_is_told_the_short_interval():
    h = Harness(FakeTopics(orders=6))
    steps = story(h)
    assert h.cg_group("g").members["m2"].state is MemberState.STABLE
    intervals = {step: r["heartbeat_interval"] for step, r in steps.items()}
    assert intervals == {
        "m1 joins": GROUP_INTERVAL,
        "m2 joins": 100,               # epoch 3, nothing yet: m1 still owns everything
        "m1 told to revoke": GROUP_INTERVAL,  # UNREVOKED_PARTITIONS: the client acts on that at once anyway
        "m2 still waits": 100,
        "m1 acknowledges": GROUP_INTERVAL,
        "m2 gets its partitions": GROUP_INTERVAL,  # has what it waited for: the group's interval again
        "m2 acknowledges": GROUP_INTERVAL,
    }


def test_a_member_given_part_of_its_partitions_is_told_the_short_interval_until_it_has_all():
    # m1 and m2 own 3 each; m3 joins and its 2 partitions come one from each. m1 releases first: m3 gets
    # that one but still waits for m2's, so it is still told the short interval.
    h = Harness(FakeTopics(orders=6))
    h.cg_join("g", "m1")
    h.cg_join("g", "m2")
    kept1 = assigned(h.cg("g", "m1", 2))
    h.cg("g", "m1", 2, owned={"orders": kept1})
    got2 = assigned(h.cg("g", "m2", 3))
    h.cg("g", "m2", 3, owned={"orders": got2})
    assert h.cg_group("g").members["m2"].state is MemberState.STABLE
    r3 = h.cg_join("g", "m3")
    assert (assigned(r3), r3["heartbeat_interval"]) == ([], 100)
    kept1 = assigned(h.cg("g", "m1", 3))
    h.cg("g", "m1", 3, owned={"orders": kept1})
    r3 = h.cg("g", "m3", 4)
    assert len(assigned(r3)) == 1 and h.cg_group("g").members["m3"].state is MemberState.UNRELEASED_PARTITIONS
    assert r3["heartbeat_interval"] == 100
    kept2 = assigned(h.cg("g", "m2", 3))
    h.cg("g", "m2", 3, owned={"orders": kept2})
    r3 = h.cg("g", "m3", 4)
    assert len(assigned(r3)) == 2 and h.cg_group("g").members["m3"].state is MemberState.STABLE
    assert r3["heartbeat_interval"] == GROUP_INTERVAL


def test_at_0_every_answer_carries_the_group_interval_as_kafka_and_nothing_else_changes():
    on = story(Harness(FakeTopics(orders=6)))
    off = story(Harness(FakeTopics(orders=6), group_consumer_unreleased_heartbeat_interval_ms=0))
    assert {r["heartbeat_interval"] for r in off.values()} == {GROUP_INTERVAL}
    without_interval = lambda steps: {s: {k: v for k, v in r.items() if k != "heartbeat_interval"}  # noqa: E731
                                      for s, r in steps.items()}
    assert without_interval(on) == without_interval(off)


@pytest.mark.parametrize("group_interval, expected", [(60, 60), (1000, 100)])
def test_the_short_interval_never_lengthens_a_shorter_group_interval(group_interval, expected):
    h = Harness(FakeTopics(orders=6), group_consumer_heartbeat_interval_ms=group_interval,
                group_consumer_min_heartbeat_interval_ms=10)
    h.cg_join("g", "m1")
    r2 = h.cg_join("g", "m2")
    assert h.cg_group("g").members["m2"].state is MemberState.UNRELEASED_PARTITIONS
    assert r2["heartbeat_interval"] == expected
