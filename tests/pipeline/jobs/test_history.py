"""`history` tells steady, stalled, rewound, stopped and deleted consumers apart."""

import pytest

from groupcoord.pipeline.jobs.history import HistoryRules, history
from tests.pipeline.scenario import REFERENCE, SECOND


@pytest.fixture(scope="module")
def rows(story_df):
    return {(r["group"], r["topic"], r["partition"]): r.asDict() for r in history(story_df, REFERENCE).collect()}


def test_each_consumer_gets_the_status_its_story_calls_for(rows):
    assert {key: row["status"] for key, row in rows.items()} == {
        ("orders", "orders", 0): "OK",
        ("orders", "orders", 1): "STALL",
        ("billing", "invoices", 0): "WARN",
        ("billing", "invoices", 1): "STOP",
        ("legacy", "old-topic", 0): "STOP",
        ("doomed", "audit", 0): "STOP",
        ("doomed", "audit", 1): "STOP",
        ("txn-app", "payments", 0): "OK",  # committed 290s ago: younger than the 5-minute idle floor
    }


def test_cadence_progress_and_age_of_a_steady_consumer(rows):
    steady = rows[("orders", "orders", 0)]
    assert (steady["commits"], steady["last_offset"], steady["rewinds"], steady["last_commit_age_ms"]) == (30, 3000, 0, 0)
    assert steady["mean_interval_ms"] == 30 * SECOND
    assert steady["progress_per_sec"] == pytest.approx((3000 - 100) / 870)
    assert (steady["window_commits"], steady["window_span_ms"]) == (10, 270 * SECOND)


def test_a_rewind_is_counted_and_a_deletion_is_flagged(rows):
    rewound = rows[("billing", "invoices", 0)]
    assert (rewound["rewinds"], rewound["window_rewinds"], rewound["last_offset"]) == (1, 1, 900)
    assert rows[("doomed", "audit", 0)]["deleted"] and not rows[("billing", "invoices", 1)]["deleted"]


def test_a_shorter_idle_floor_stops_a_consumer_sooner(story_df):
    strict = history(story_df, REFERENCE, HistoryRules(window=10, min_idle_ms=60 * SECOND))
    status = {(r["group"], r["partition"]): r["status"] for r in strict.collect()}
    assert status[("txn-app", 0)] == "STOP"
    assert status[("billing", 0)] == "WARN"  # its last commit (60s ago) is within its window's span
