"""Partitions are not bounded by ``ulimit -n``: 3,000 of them at 256 descriptors are created, appended to,
restarted and read back, and a topic created after them still works (issue 17)."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = 3000
NOFILE = 256


def test_three_thousand_partitions_start_and_serve_at_ulimit_256():
    # tmpfs where available: the test is about descriptors, not about how fast this disk fsyncs 9,000 files
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=base) as data_dir:
        child = subprocess.run(
            [sys.executable, "-m", "tests.coordinator.many_partitions_child", data_dir, str(PARTITIONS), str(NOFILE)],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=240)
    assert child.returncode == 0, child.stderr[-3000:]
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["create_error"] == 0 and report["late_error"] == 0
    assert report["read_back"] == PARTITIONS
    assert report["pool"] == NOFILE // 4
    assert report["fds_after_appends"] < NOFILE // 2 and report["fds_after_reads"] < NOFILE // 2
