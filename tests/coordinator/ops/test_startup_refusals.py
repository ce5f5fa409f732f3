"""Every start-up refusal a user can cause is one line on stderr and exit status 2, never a traceback
(issue 17): data directory in use, read-only filesystem, full disk, unreadable or malformed configuration,
port in use, bad setting. The filesystem cases mount a small tmpfs (root only; skipped otherwise)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tmpfs import small_filesystem_or_skip
from tests.support.daemon import Daemon


def _serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0", "--metrics-port", "0", *args]


def serve(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(_serve_command(*args), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def refused_starts(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """The refusals that need nothing held while they run (a file, a flag, a variable), each its own
    `groupcoord serve` as above, started side by side: an interpreter's start is most of each, and the two cores
    serve two at a time. {case: the finished run}."""
    root = tmp_path_factory.mktemp("refusals")
    malformed, unknown = root / "malformed.toml", root / "unknown.toml"
    malformed.write_text('"fsync" = = "batch"\n')
    unknown.write_text('"no.such.setting" = 1\n')
    cases = {
        "missing": (["--data-dir", str(root / "missing-data"), "--config", str(root / "missing.toml")], {}),
        "malformed": (["--data-dir", str(root / "malformed-data"), "--config", str(malformed)], {}),
        "directory": (["--data-dir", str(root / "directory-data"), "--config", str(root)], {}),
        "unknown": (["--data-dir", str(root / "unknown-data"), "--config", str(unknown)], {}),
        "flag": (["--data-dir", str(root / "flag-data"), "--fsync", "sometimes"], {}),
        "environment": (["--data-dir", str(root / "environment-data")], {"GROUPCOORD_GROUP_MAX_SIZE": "many"}),
    }
    running = {name: subprocess.Popen(_serve_command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env={**os.environ, **env})
               for name, (args, env) in cases.items()}
    finished = {}
    try:
        for name, proc in running.items():
            out, err = proc.communicate(timeout=120)
            finished[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    finally:
        for proc in running.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    return finished


def assert_refused(result: subprocess.CompletedProcess, *words: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("groupcoord: cannot start: "), result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_a_data_directory_in_use(tmp_path):
    daemon = Daemon(tmp_path / "data").start()
    try:
        assert_refused(serve("--data-dir", str(tmp_path / "data")), "in use by another groupcoord process",
                       "--data-dir")
    finally:
        daemon.kill()


def test_a_port_in_use(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "groupcoord", "serve", "--listen", f"127.0.0.1:{port}",
                                 "--metrics-port", "0", "--data-dir", str(tmp_path / "data")],
                                capture_output=True, text=True, timeout=60)
    assert_refused(result, f"127.0.0.1:{port}", "already in use")


def test_a_missing_configuration_file(refused_starts):
    assert_refused(refused_starts["missing"], "does not exist")


def test_a_malformed_configuration_file(refused_starts):
    assert_refused(refused_starts["malformed"], "not valid TOML")


def test_a_configuration_file_that_is_a_directory(refused_starts):
    assert_refused(refused_starts["directory"], "is a directory")


def test_an_unknown_setting_in_the_configuration_file(refused_starts):
    assert_refused(refused_starts["unknown"], "no.such.setting")


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_bad_setting_value(refused_starts, how):
    assert_refused(refused_starts[how], "bad setting")


@pytest.fixture
def small_filesystem(tmp_path: Path):
    with small_filesystem_or_skip(tmp_path / "fs", "2m", "a read-only or full filesystem") as mount:
        yield mount


def test_a_read_only_filesystem(small_filesystem):
    (small_filesystem / "data").mkdir()
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_filesystem)]).returncode == 0
    assert_refused(serve("--data-dir", str(small_filesystem / "data")), "read-only filesystem")


def test_a_full_disk(small_filesystem):
    with open(small_filesystem / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    assert_refused(serve("--data-dir", str(small_filesystem / "data")), "no space left")
