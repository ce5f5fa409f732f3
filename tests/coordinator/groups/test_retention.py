"""Offset expiry (KIP-211): offsets outlive an empty group by offsets.retention.minutes, then the group goes."""

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import Harness, subscription

MINUTE = 60_000


def retention_harness() -> Harness:
    return Harness(offsets_retention_minutes=10, offsets_retention_check_interval_ms=MINUTE)


def test_offsets_of_an_empty_group_expire_retention_after_it_became_empty_then_the_group_is_removed():
    h = retention_harness()
    ids = h.form_group("g", "a", session=120_000)
    h.commit("g", {("orders", 0): 5}, generation=1, member_id=ids["a"])
    for _ in range(14):  # a consumer that stays for a long time keeps its offsets
        h.advance(MINUTE - 1000)
        assert h.heartbeat("g", ids["a"], 1) == ErrorCode.none
    h.leave("g", ids["a"])
    h.advance(9 * MINUTE)
    assert h.committed("g") == {("orders", 0): 5}
    h.advance(2 * MINUTE)
    assert h.committed("g") == {}
    assert h.state("g") == "Dead"
    assert h.log[-1][1] is None  # the GroupMetadata tombstone


def test_standalone_offsets_expire_retention_after_their_commit():
    h = retention_harness()
    h.commit("manual", {("orders", 0): 1})
    h.advance(5 * MINUTE)
    h.commit("manual", {("orders", 1): 2})
    h.advance(5 * MINUTE + 1)
    assert h.committed("manual") == {("orders", 1): 2}
    h.advance(5 * MINUTE)
    assert h.state("manual") == "Dead"


def test_an_explicit_expire_timestamp_wins_over_the_retention_setting():
    h = retention_harness()
    h.commit("g", {("orders", 0): 1}, retention_ms=2 * MINUTE, version=3)
    h.advance(2 * MINUTE)
    assert h.committed("g") == {}


def test_a_stable_consumer_group_keeps_offsets_of_subscribed_topics_and_expires_the_others():
    h = retention_harness()
    ids = h.form_group("g", "a", session=120_000, protocols=[("range", subscription("orders"))])
    h.commit("g", {("orders", 0): 1, ("payments", 0): 2}, generation=1, member_id=ids["a"])
    for _ in range(12):
        h.advance(MINUTE)
        assert h.heartbeat("g", ids["a"], 1) == ErrorCode.none
    assert h.committed("g") == {("orders", 0): 1}
    assert ("g", 1) in [(e[1], e[2]) for e in h.observer.events if e[0] == "rebalance"]


def test_an_empty_group_that_never_committed_is_removed_by_the_next_pass():
    h = retention_harness()
    ids = h.form_group("g", "a")
    h.leave("g", ids["a"])
    h.advance(MINUTE)
    assert h.state("g") == "Dead"
