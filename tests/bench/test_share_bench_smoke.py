"""The share-group bench runs end to end on a short setting and prints a records/s figure for the 4-member
share group and for the 4-member consumer group (not checked). One run: start-up is most of its cost."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_share_bench_prints_both_groups_figures():
    done = subprocess.run([sys.executable, "-m", "bench.share_bench", "--records", "1000"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"consumer group \(KIP-848.*?[\d,]+ records/s", done.stdout), done.stdout
    assert re.search(r"share group \(KIP-932.*?[\d,]+ records/s", done.stdout), done.stdout
