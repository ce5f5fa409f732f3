"""`groupcoord pipeline <job>` end to end: the files an operator gets, and that the admin tools accept them."""

import base64
import re

from groupcoord.coordinator.admin.offsets_csv import read_offsets_csv
from groupcoord.coordinator.ops.cli import main as groupcoord_main
from groupcoord.pipeline.cli import main as pipeline_main
from tests.pipeline.scenario import REFERENCE, SECOND, T0
from tests.pipeline.small_data import SMALL_DATA_FLAGS


def test_snapshot_from_the_command_line_feeds_offsets_reset_from_file(spark, story, story_dir, tmp_path, capsys):
    code = groupcoord_main(["pipeline", "snapshot", "--data-dir", str(story_dir), "--out", str(tmp_path),
                            "--master", "local[2]", *SMALL_DATA_FLAGS, "--at", "2023-11-14T22:21:40Z"])  # T0 + 500s
    assert code == 0
    assert "integrity:" in capsys.readouterr().err
    expected = story.committed_at(T0 + 500 * SECOND)
    text = (tmp_path / "snapshot.csv").read_text()
    for group in ("orders", "billing"):
        wanted = {(t, p): o for (g, t, p), o in expected.items() if g == group}
        assert read_offsets_csv(text, group) == wanted


def test_the_report_is_one_html_file_with_embedded_plots(spark, story_dir, tmp_path, capsys):
    code = pipeline_main(["report", "--data-dir", str(story_dir), "--out", str(tmp_path), "--master", "local[2]",
                          *SMALL_DATA_FLAGS, "--at", str(REFERENCE)])
    assert code == 0
    page = (tmp_path / "report.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 4
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)
    assert "<script" not in page and "http" not in page  # self-contained
    for expected in ("STALL", "orders", "storm", "invoices", "corrupt=0"):
        assert expected in page
    assert f"report -> {tmp_path / 'report.html'}" in capsys.readouterr().out


def test_history_rebalances_and_health_write_the_tables_their_functions_compute(spark, story_df, story_dir, tmp_path):
    import csv

    from groupcoord.pipeline.jobs.health import health
    from groupcoord.pipeline.jobs.history import history
    from groupcoord.pipeline.jobs.rebalances import generations, rebalance_summary

    for job in ("history", "rebalances", "health"):  # history without --at: "now" is the newest record
        assert pipeline_main([job, "--data-dir", str(story_dir), "--out", str(tmp_path), "--master", "local[2]",
                             *SMALL_DATA_FLAGS]) == 0

    def table(name):
        with (tmp_path / f"{name}.csv").open(newline="") as handle:
            return list(csv.DictReader(handle))

    assert {(r["group"], r["topic"], r["partition"], r["status"]) for r in table("history")} == {
        (r["group"], r["topic"], str(r["partition"]), r["status"]) for r in history(story_df, REFERENCE).collect()}
    assert {(r["group"], r["rebalances"], r["storm"]) for r in table("rebalances")} == {
        (r["group"], str(r["rebalances"]), str(r["storm"])) for r in rebalance_summary(generations(story_df)).collect()}
    assert [(r["offsets_partition"], r["records"], r["live_keys"]) for r in table("health")] == [
        (str(r["offsets_partition"]), str(r["records"]), str(r["live_keys"]))
        for r in health(story_df).orderBy("offsets_partition").collect()]
    assert int(table("health")[0]["segment_bytes"]) == sum(
        p.stat().st_size for p in (story_dir / "__consumer_offsets-1").glob("*.log"))
    assert (tmp_path / "rebalances_hourly.csv").exists() and (tmp_path / "generations.parquet").is_dir()


def test_a_directory_without_an_offsets_log_is_a_clear_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / "orders-0").mkdir()
    assert pipeline_main(["health", "--data-dir", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "holds no __consumer_offsets-N directories" in capsys.readouterr().err
