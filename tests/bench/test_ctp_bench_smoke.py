"""The consume-transform-produce bench's formed-group mode runs end to end against its own daemon: the members
hold their partitions paused until every member has a share, every input record reaches the output topic, and
the line reports how long forming took, the assignments received and the broker's CPU (figures not checked)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_formed_group_consumes_transforms_and_commits_every_record():
    # 100 ms of initial delay: the group forms in one generation instead of waiting out the formation race
    # (bench.ctp_bench's text) in 3 s heartbeats
    done = subprocess.run([sys.executable, "-m", "bench.ctp_bench", "--records", "3000", "--formed",
                           "--initial-rebalance-delay-ms", "100"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    line = re.search(r"3,000 records, 6 partitions, 3 members from a formed group \(forming took [\d.]+ s\): "
                     r"[\d.]+ s .*?([\d,]+) records out, (\d+) assignments received, broker CPU [\d.]+ s", done.stdout)
    assert line, done.stdout
    assert int(line[1].replace(",", "")) >= 3000  # at-least-once: every input record is on the output topic
    assert int(line[2]) >= 3  # each of the three members was given its share at least once
