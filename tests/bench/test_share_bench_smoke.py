"""The share-group bench runs end to end on a short setting (two runs, so the median line too) and prints a
records/s figure for the 4-member share group and for the 4-member consumer group (not checked)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_share_bench_prints_both_groups_figures_and_their_median():
    done = subprocess.run([sys.executable, "-m", "bench.share_bench", "--records", "1000", "--runs", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(re.findall(r"consumer group \(KIP-848.*?[\d,]+ records/s", done.stdout)) == 2, done.stdout
    assert len(re.findall(r"share group \(KIP-932.*?[\d,]+ records/s", done.stdout)) == 2, done.stdout
    assert re.search(r"median of 2 runs: consumer group [\d,]+ records/s, share group [\d,]+ records/s", done.stdout)
