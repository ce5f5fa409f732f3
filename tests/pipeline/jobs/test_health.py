"""`health` shows each offsets partition's load, skew and how much of it is live."""

import pytest

from groupcoord.pipeline.jobs.health import HealthSettings, health


def test_records_live_keys_and_replay_estimate_per_offsets_partition(story, story_df):
    segment_bytes = {0: 0, 1: 1000, 2: 500}  # partition 0: an empty segment, no group hashed there
    rows = {r["offsets_partition"]: r.asDict() for r in
            health(story_df, segment_bytes, HealthSettings(replay_records_per_sec=10.0)).collect()}
    assert {p: r["records"] for p, r in rows.items()} == {0: 0, **story.records_written}
    assert {p: r["live_keys"] for p, r in rows.items()} == {0: 0, **story.live_keys()}
    assert rows[0]["live_ratio"] is None and rows[0]["record_share"] == 0
    for partition, row in rows.items():
        if partition == 0:
            continue
        assert row["live_ratio"] == pytest.approx(row["live_keys"] / row["records"])
        assert row["estimated_replay_sec"] == pytest.approx(row["records"] / 10.0)
        assert row["segment_bytes"] == segment_bytes[partition]
        assert (row["corrupt"], row["torn_tail"], row["malformed"], row["unknown"]) == (0, 0, 0, 0)
    counts = [0, *story.records_written.values()]
    assert rows[1]["skew"] == pytest.approx(max(counts) / (sum(counts) / len(counts)))
    assert sum(r["record_share"] for r in rows.values()) == pytest.approx(1.0)
    assert rows[1]["tombstones"] + rows[2]["tombstones"] == 3
