"""Snapshot, history and rebalances agree with a plain-Python replay of the same bytes, on a big random log.

The log (tests/pipeline/big_log.py) mixes commits, expiring commits, tombstones, group metadata of many
generations, committed / aborted / open transactions, several segments per offsets partition, and one
partition compacted by the project's log cleaner. The replay (tests/pipeline/plain_replay.py) decodes the
segments with the protocol codecs and applies each job's rules with dicts and sorts; every row and every
column must match. The default run uses 40,000 records; the 5-million-record run goes through the
`groupcoord pipeline` commands themselves and is in the full run (GROUPCOORD_FULL_TESTS=1, ~15-25 min on
two busy cores; `python -m bench.pipeline_bench` measures the same run).
"""

from __future__ import annotations

import pytest

from groupcoord.pipeline.jobs.history import history
from groupcoord.pipeline.jobs.rebalances import generations, rebalance_summary
from groupcoord.pipeline.jobs.snapshot import snapshot
from groupcoord.pipeline.session import read_offsets
from tests.pipeline.big_log import write_big_log
from tests.pipeline.plain_replay import PlainReplay, compare_rows, typed_csv_rows

SNAPSHOT_KEY = ("group", "topic", "partition")
GENERATION_KEY = ("group", "generation")


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("big") / "data"
    log = write_big_log(data_dir, 40_000, groups=300, offsets_partitions=4, segment_bytes=256 * 1024, compact=(1,))
    return log, PlainReplay(data_dir)


def _rows(df) -> list[dict]:
    return [row.asDict(recursive=True) for row in df.collect()]


def test_the_big_log_is_varied_enough_to_judge_by(big):
    log, replay = big
    statuses = {row["status"] for row in replay.history(log.end_ms)}
    assert statuses == {"OK", "WARN", "STALL", "STOP"}
    assert any(row["storm"] for row in replay.rebalances())
    assert any(a.value is None for a in replay.applied) and log.segments > 8
    assert replay.records < log.records  # the compacted partition lost records


def test_every_answer_matches_the_plain_replay(spark, big):
    log, replay = big
    df = read_offsets(spark, str(log.data_dir)).cache()
    try:
        assert df.count() == replay.records
        at = log.end_ms - 600_000  # ten minutes before the end: later commits must not count
        problems = compare_rows("snapshot", _rows(snapshot(df, at)), replay.snapshot(at), SNAPSHOT_KEY)
        problems += compare_rows("history", _rows(history(df, at)), replay.history(at), SNAPSHOT_KEY)
        gens = generations(df)
        problems += compare_rows("generations", _rows(gens), replay.generations(), GENERATION_KEY)
        problems += compare_rows("rebalances", _rows(rebalance_summary(gens)), replay.rebalances(), ("group",))
    finally:
        df.unpersist()
    assert not problems, "\n".join(problems)


@pytest.mark.full("5,000,000 records through the pipeline commands (~15-25 min)")
@pytest.mark.timeout(3600)  # pytest-timeout's suite-wide 300 s would cut it short
def test_five_million_records_through_the_commands_match_the_plain_replay(tmp_path):
    from tests.pipeline.cli_runs import run_cli

    log = write_big_log(tmp_path / "data", 5_000_000, compact=(3, 7))
    replay = PlainReplay(log.data_dir)
    at = str(log.end_ms)
    problems = []
    done = run_cli([["pipeline", job, "--data-dir", str(log.data_dir), "--out", str(tmp_path / job), *extra]
                    for job, extra in (("snapshot", ["--at", at]), ("history", ["--at", at]), ("rebalances", []))],
                   timeout=3000)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = {"snapshot": replay.snapshot(log.end_ms), "history": replay.history(log.end_ms),
                "generations": replay.generations(), "rebalances": replay.rebalances()}
    for name, key in (("snapshot", SNAPSHOT_KEY), ("history", SNAPSHOT_KEY), ("generations", GENERATION_KEY),
                      ("rebalances", ("group",))):
        folder = tmp_path / ("rebalances" if name == "generations" else name)
        problems += compare_rows(name, typed_csv_rows(folder / f"{name}.csv", expected[name]), expected[name], key)
    assert not problems, "\n".join(problems)
