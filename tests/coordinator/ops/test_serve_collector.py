"""`groupcoord serve` runs its start-up with the cyclic collector off and turns it back on once ready
(coordinator/ops/cli.py ``_serve``): on after a clean stop and after a refusal, as it was found."""

from __future__ import annotations

import gc
import subprocess
import sys

from groupcoord.coordinator.ops import cli


def test_the_daemon_starts_with_the_collector_off_and_has_it_on_once_ready(tmp_path):
    code = (
        "import gc, os, signal\n"
        "from groupcoord.coordinator.ops import cli\n"
        "seen = []\n"
        "settle = cli.settle_heap\n"
        "def settle_then_stop():\n"
        "    seen.append(gc.isenabled())\n"
        "    settle()\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "cli.settle_heap = settle_then_stop\n"
        f"status = cli.main(['serve', '--listen', '127.0.0.1:0', '--metrics-port', '0', '--data-dir', {str(tmp_path)!r}])\n"
        "print('RESULT', status, seen, gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    (result,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    assert result == "RESULT 0 [False] True True"


def test_a_refused_start_leaves_the_collector_as_it_found_it(capsys):
    assert gc.isenabled()
    assert cli.main(["serve", "--listen", "127.0.0.1:0", "--fsync", "sometimes"]) == 2
    assert gc.isenabled()
    gc.disable()
    try:
        assert cli.main(["serve", "--listen", "127.0.0.1:0", "--fsync", "sometimes"]) == 2
        assert not gc.isenabled()
    finally:
        gc.enable()
