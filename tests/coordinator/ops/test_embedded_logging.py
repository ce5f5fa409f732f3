"""An application embedding Broker without configuring structlog hears nothing below WARNING, and its own
``logging`` configuration decides what it hears; the command line answers --version."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

EMBED = """
import logging, sys
{setup}
from groupcoord.coordinator.broker import run_in_thread
with run_in_thread() as broker:
    print("started", broker.bootstrap_servers, file=sys.stdout)
"""


def _embed(setup: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", EMBED.format(setup=setup)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_an_application_that_configured_nothing_sees_no_broker_lines():
    done = _embed("")
    assert done.returncode == 0, done.stderr
    assert "started" in done.stdout
    assert done.stderr.strip() == "", f"an unconfigured embedding printed:\n{done.stderr[:2000]}"


def test_the_applications_logging_level_lets_the_debug_lines_through():
    done = _embed("logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(name)s %(message)s')")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("groupcoord.")]
    assert any(line.startswith("groupcoord.broker broker started") for line in lines), done.stderr[-2000:]
    assert len(lines) > 10  # the per-partition load lines an application asked for


def test_a_warning_level_application_hears_warnings_only():
    done = _embed("logging.basicConfig(level=logging.WARNING)")
    assert done.returncode == 0, done.stderr
    assert "broker started" not in done.stderr


def test_version_is_the_installed_distributions():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    done = subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"groupcoord {version}"


def test_the_license_is_an_spdx_expression():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
