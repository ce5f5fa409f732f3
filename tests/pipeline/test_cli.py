"""`groupcoord pipeline <job>` end to end: the files an operator gets, and that the admin tools accept them."""

import base64
import re

from coordinator.admin.offsets_csv import read_offsets_csv
from coordinator.cli import main as groupcoord_main
from pipeline.cli import main as pipeline_main
from tests.pipeline.scenario import REFERENCE, SECOND, T0


def test_snapshot_from_the_command_line_feeds_offsets_reset_from_file(spark, story, story_dir, tmp_path, capsys):
    code = groupcoord_main(["pipeline", "snapshot", "--data-dir", str(story_dir), "--out", str(tmp_path),
                            "--master", "local[2]", "--at", "2023-11-14T22:21:40Z"])  # T0 + 500s
    assert code == 0
    assert "integrity:" in capsys.readouterr().err
    expected = story.committed_at(T0 + 500 * SECOND)
    text = (tmp_path / "snapshot.csv").read_text()
    for group in ("orders", "billing"):
        wanted = {(t, p): o for (g, t, p), o in expected.items() if g == group}
        assert read_offsets_csv(text, group) == wanted


def test_the_report_is_one_html_file_with_embedded_plots(spark, story_dir, tmp_path, capsys):
    code = pipeline_main(["report", "--data-dir", str(story_dir), "--out", str(tmp_path), "--master", "local[2]",
                          "--at", str(REFERENCE)])
    assert code == 0
    page = (tmp_path / "report.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 4
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)
    assert "<script" not in page and "http" not in page  # self-contained
    for expected in ("STALL", "orders", "storm", "invoices", "corrupt=0"):
        assert expected in page
    assert f"report -> {tmp_path / 'report.html'}" in capsys.readouterr().out
