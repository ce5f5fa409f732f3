"""bench.franz_etl: franz-go's own consumer-group ETL test built from the published module and run against our
daemon (every record once and in order at each of three chained groups, under joins, leaves, KIP-848 and static
members: the client's checks, not ours), and the reading of its timings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.franz_etl import _go_duration

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "seconds"), [("2m3.314056352s", 123.314056352), ("21.08s", 21.08),
                                                ("812.5ms", 0.8125), ("1h0m1s", 3601.0), ("250µs", 0.00025)])
def test_go_durations_read_as_seconds(text, seconds):
    assert _go_duration(text) == pytest.approx(seconds)


@pytest.mark.full("franz-go's TestGroupETL at 2,000 records against the daemon (~40 s with its first build)")
def test_the_client_library_etl_test_passes_against_the_daemon():
    from bench.franz_etl import FranzEtlUnavailable, test_binary

    try:
        test_binary()
    except FranzEtlUnavailable as exc:
        pytest.skip(f"franz-go's test binary cannot be built here: {exc}")
    done = subprocess.run([sys.executable, "-m", "bench.franz_etl", "--records", "2000"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "TestGroupETL 2,000 records:" in done.stdout
    for combination in ("range", "cooperative-sticky", "range/848", "sticky/848", "cooperative-sticky/static",
                        "sticky/848/static"):
        assert f"{combination} " in done.stdout, done.stdout


def test_a_trace_is_written_as_csv_with_a_gap_where_a_process_was_not_read(tmp_path):
    from bench.franz_etl import EtlResult, write_trace

    result = EtlResult(40.0, trace=[(0.5, {"client": 0.25, "broker": 1.0}), (1.0, {"broker": 0.5})])
    write_trace(result, tmp_path / "trace.csv")
    assert (tmp_path / "trace.csv").read_text().splitlines() == [
        "seconds,client,broker", "0.50,0.250,1.000", "1.00,,0.500"]
