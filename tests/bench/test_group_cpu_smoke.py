"""bench.group_cpu runs end to end against its own daemon: the groups form and the line reports the broker's
and the client's CPU per group (figures not checked)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_groups_form_and_both_sides_cpu_is_reported():
    done = subprocess.run([sys.executable, "-m", "bench.group_cpu", "--groups", "60", "--warm-groups", "5", "--runs", "1",
                           "--fsync", "never"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    line = re.search(r"fsync=never 60 groups of 3: [\d.]+ s; broker ([\d.]+) ms CPU per group .*; client ([\d.]+) ms",
                     done.stdout)
    assert line, done.stdout
    assert float(line[1]) > 0 and float(line[2]) > 0
