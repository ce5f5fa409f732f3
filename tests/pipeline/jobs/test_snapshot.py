"""`snapshot --at T` answers what OffsetFetch would have answered at T."""

import pytest

from groupcoord.pipeline.jobs.snapshot import SNAPSHOT_COLUMNS, run, snapshot
from tests.pipeline.scenario import REFERENCE, SECOND, T0


def _as_map(rows):
    return {(r["group"], r["topic"], r["partition"]): r["offset"] for r in rows}


@pytest.mark.parametrize(
    "moment",
    [
        pytest.param(T0 + 45 * SECOND, id="before-doomed-commits"),
        pytest.param(T0 + 399 * SECOND, id="legacy-not-yet-expired"),
        pytest.param(T0 + 400 * SECOND, id="legacy-expired"),
        pytest.param(T0 + 500 * SECOND, id="doomed-deleted"),
        pytest.param(T0 + 605 * SECOND, id="transaction-not-yet-committed"),
        pytest.param(T0 + 610 * SECOND, id="transaction-committed"),
        pytest.param(REFERENCE, id="end-aborted-and-open-transactions-ignored"),
    ],
)
def test_snapshot_at_a_moment_equals_the_offsets_committed_at_that_moment(story, story_df, moment):
    assert _as_map(snapshot(story_df, moment).collect()) == story.committed_at(moment)


def test_snapshot_rows_carry_epoch_metadata_and_commit_time_of_the_last_commit(story_df):
    rows = {(r["group"], r["partition"]): r.asDict() for r in snapshot(story_df, T0 + 95 * SECOND).collect()}
    assert rows[("orders", 0)] == {
        "group": "orders", "topic": "orders", "partition": 0, "offset": 300, "leader_epoch": 3,
        "metadata": "orders-app", "commit_timestamp": T0 + 90 * SECOND,
    }


def test_snapshot_files_are_what_offsets_reset_from_file_reads(story, story_df, tmp_path):
    rows = run(story_df, tmp_path, REFERENCE)
    lines = (tmp_path / "snapshot.csv").read_text().splitlines()
    assert lines[0] == "group,topic,partition,offset,leader_epoch,metadata,commit_timestamp"
    assert lines[1:] == [",".join(str(r[c]) for c in SNAPSHOT_COLUMNS) for r in rows]
    assert _as_map(rows) == story.committed_at(REFERENCE)
    assert (tmp_path / "snapshot.parquet").is_dir()
