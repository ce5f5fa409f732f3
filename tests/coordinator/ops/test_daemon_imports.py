"""What the daemon's process imports: kio pulls in hypothesis whenever it is installed (as in this test
environment), which cost the daemon a third of its start-up; `groupcoord serve` keeps it out."""

import subprocess
import sys


def test_kio_loads_without_hypothesis_once_serve_keeps_it_out():
    code = ("import sys\n"
            "from groupcoord.coordinator.ops.cli import keep_test_libraries_out\n"
            "keep_test_libraries_out()\n"
            "import groupcoord.coordinator.broker, kio.static.primitive\n"
            "print(sys.modules.get('hypothesis') is None, 'hypothesis.strategies' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_a_process_that_already_has_hypothesis_keeps_it():
    code = ("import sys, hypothesis\n"
            "from groupcoord.coordinator.ops.cli import keep_test_libraries_out\n"
            "keep_test_libraries_out()\n"
            "import hypothesis.strategies\n"
            "print(sys.modules['hypothesis'] is hypothesis)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"]

