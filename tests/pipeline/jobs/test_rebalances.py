"""`rebalances` counts the generations each group went through, and spots a storm."""

import pytest

from groupcoord.pipeline.jobs.rebalances import StormRules, generations, hourly, rebalance_summary


@pytest.fixture(scope="module")
def generation_rows(story_df):
    return {(r["group"], r["generation"]): r.asDict() for r in generations(story_df).collect()}


@pytest.fixture(scope="module")
def summary(story_df):
    return {r["group"]: r.asDict() for r in rebalance_summary(generations(story_df)).collect()}


def test_rebalance_counts_equal_the_generations_each_group_went_through(summary):
    assert {g: (s["rebalances"], s["missing_generations"]) for g, s in summary.items()} == {
        "orders": (3, 0), "doomed": (1, 0), "storm": (6, 0)}


def test_members_static_share_and_leader_per_generation(generation_rows):
    orders = [generation_rows[("orders", g)] for g in (1, 2, 3)]
    assert [(g["member_count"], g["static_members"], g["leader"], g["leader_changed"]) for g in orders] == [
        (1, 0, "orders-m1", False), (2, 1, "orders-m1", False), (2, 2, "orders-m2", True)]
    assert generation_rows[("storm", 6)]["member_count"] == 0


def test_a_burst_of_generations_is_a_storm_and_a_few_are_not(summary):
    assert summary["storm"]["storm"] and summary["storm"]["max_in_storm_window"] == 6
    assert not summary["orders"]["storm"]
    assert summary["orders"]["leader_changes"] == 1
    assert summary["orders"]["mean_static_share"] == pytest.approx((0 + 0.5 + 1.0) / 3)


def test_a_tighter_storm_rule_changes_the_verdict(story_df):
    tight = rebalance_summary(generations(story_df), StormRules(window_ms=100_000, threshold=3))
    verdict = {r["group"]: (r["max_in_storm_window"], r["storm"]) for r in tight.collect()}
    assert verdict["storm"] == (3, True) and verdict["orders"] == (2, False)


def test_hourly_rebalances_add_up_to_the_total(story_df, summary):
    per_hour = hourly(generations(story_df)).collect()
    totals = {}
    for row in per_hour:
        assert row["hour_start"] % 3_600_000 == 0
        totals[row["group"]] = totals.get(row["group"], 0) + row["rebalances"]
    assert totals == {group: s["rebalances"] for group, s in summary.items()}
