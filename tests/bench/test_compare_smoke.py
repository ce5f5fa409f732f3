"""The side-by-side harness runs end to end: `python -m bench.compare --quick` against groupcoord alone
(no Java needed) prints its table and keeps every sample as JSON. Figures are not checked, only that they exist."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import isolated
from bench.compare_figures import QUICK

ROOT = Path(__file__).resolve().parents[2]


def test_compare_quick_against_groupcoord_prints_a_table_and_writes_json(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "bench.compare", "--quick", "--brokers", "groupcoord", "--only", "big_group",
         "--results-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "classic group of 50 members Stable, groupcoord fsync=batch (ms, lower better)" in done.stdout
    assert "classic group of 50 members Stable, groupcoord fsync=never (ms, lower better)" in done.stdout
    assert "FAILED" not in done.stdout, done.stdout
    [written] = tmp_path.glob("compare-*-quick.json")
    document = json.loads(written.read_text())
    assert document["brokers"] == ["groupcoord"]
    [sample] = document["figures"]["big_group"]["samples"]["groupcoord-batch"]
    assert sample["big_group_ms"] > 0 and sample["startup_ms"] > 0
    assert document["table"][0]["groupcoord_values"] == [sample["big_group_ms"]]
    [never] = document["figures"]["big_group"]["samples"]["groupcoord-never"]
    assert document["table"][1]["groupcoord_values"] == [never["big_group_ms"]]


def test_a_figure_that_fails_in_its_own_process_is_reported_with_the_childs_traceback():
    """bench.isolated runs each measurement in a fresh process; its exception comes back as FigureFailed."""
    with pytest.raises(isolated.FigureFailed) as failed:
        isolated.measure("big_group", "127.0.0.1:1", QUICK, {}, None, limit_s=60.0)
    message = str(failed.value)
    assert "ConnectionRefusedError" in message or "OSError" in message, message
    assert "in the figure's process" in message and "Traceback" in message


def test_the_etl_rows_say_what_the_broker_ran_before_and_the_fresh_figure_runs_the_largest_size_alone():
    """Kafka runs TestGroupETL slower when it is not the broker's first test: each row says which it was."""
    from bench.compare_figures import FIGURES, FULL

    in_turn = FIGURES["franz_etl"].rows(FULL)
    walls = [row for row in in_turn if row.key.endswith("000_s")]
    assert [row.key for row in walls] == ["franz_etl_50000_s", "franz_etl_500000_s"]
    assert walls[0].label.endswith("the broker's first test")
    assert walls[1].label.endswith("after the 50,000-record test")
    assert [row.key for row in in_turn[1:5]] == ["franz_etl_50000_client_cpu_s", "franz_etl_50000_client_saturated_s",
                                                 "franz_etl_50000_broker_cpu_s", "franz_etl_50000_broker_saturated_s"]
    alone = FIGURES["franz_etl_fresh"].rows(FULL)
    assert [row.key for row in alone][0] == "franz_etl_fresh_500000_s"
    assert alone[0].label.endswith("alone on a fresh broker")
    assert {row.key.split("_")[3] for row in alone} == {"500000"}
