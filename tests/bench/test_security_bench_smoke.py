"""The security bench runs end to end on a short setting and prints its three figures (not checked)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_security_bench_prints_the_tls_ratio_and_scram_rates():
    done = subprocess.run([sys.executable, "-m", "bench.security_bench", "--seconds", "0.5", "--rounds", "1",
                           "--connections", "2", "--scram-clients", "4"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"TLS/plaintext = \d+\.\d\d", done.stdout), done.stdout
    assert re.search(r"SCRAM-SHA-512 +[\d,]+ authentications/s", done.stdout), done.stdout
    assert re.search(r"SCRAM-SHA-256 +[\d,]+ authentications/s", done.stdout), done.stdout
