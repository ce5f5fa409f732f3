"""The README's promises, executed: the two commands, the quick start, the configuration table."""

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from groupcoord.coordinator.ops.readme import with_current_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)


def test_the_readme_shows_the_two_commands():
    assert "make run" in README and "make test" in README


def test_the_configuration_table_lists_every_setting_as_the_code_has_it():
    assert with_current_table(README) == README, "run `make readme` to regenerate the table"


def test_the_kafka_python_quick_start_runs_as_written(groupcoord_broker):
    quick_start = next(block for block in _python_blocks() if "KafkaProducer" in block)
    code = quick_start.replace("127.0.0.1:9092", groupcoord_broker.bootstrap_servers)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line.split() for line in out.stdout.splitlines()]
    assert sorted(line[2] for line in lines) == sorted(f"b'order-{i}'" for i in range(10))


def test_the_pytest_plugin_example_passes_as_written(tmp_path):
    example = next(block for block in _python_blocks() if "groupcoord_broker" in block)
    (tmp_path / "test_example.py").write_text(example)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0 and "2 passed" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "groupcoord").exists(), reason="make run needs the project's .venv (make test creates it)")
def test_make_run_serves_until_interrupted(tmp_path):
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "run", "LISTEN=127.0.0.1:0", f"DATA={tmp_path / 'data'}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "GROUPCOORD_METRICS_PORT": "0"},
    )
    listening = threading.Event()
    lines: list[str] = []

    def pump():
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("listening on 127.0.0.1:"):
                listening.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        assert listening.wait(180), "".join(lines[-30:])
        assert (tmp_path / "data" / "meta.properties").exists()
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at the terminal: make and the daemon both get it
        proc.wait(60)
    assert any('"event": "broker stopped"' in line for line in lines), "".join(lines[-30:])
