"""What the daemon's process imports: kio pulls in hypothesis whenever it is installed (as in this test
environment), which cost the daemon a third of its start-up; `groupcoord serve` keeps it out."""

import subprocess
import sys


def _printed_by_a_fresh_process(before: str, after: str) -> list[str]:
    """Runs ``before``, then the daemon's ``keep_test_libraries_out()``, then ``after`` in a new interpreter (the
    rule acts on the process's import system, so it cannot be tried inside the test process); what it printed."""
    code = (f"import sys\n{before}\n"
            "from groupcoord.coordinator.ops.cli import keep_test_libraries_out\n"
            "keep_test_libraries_out()\n"
            f"{after}\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_kio_loads_without_hypothesis_once_serve_keeps_it_out():
    printed = _printed_by_a_fresh_process(
        "", "import groupcoord.coordinator.broker, kio.static.primitive\n"
            "print(sys.modules.get('hypothesis') is None, 'hypothesis.strategies' in sys.modules)")
    assert printed == ["True", "False"]


def test_a_process_that_already_has_hypothesis_keeps_it():
    printed = _printed_by_a_fresh_process(
        "import hypothesis", "import hypothesis.strategies\nprint(sys.modules['hypothesis'] is hypothesis)")
    assert printed == ["True"]
