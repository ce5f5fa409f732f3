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


def serve(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0",
                           "--metrics-port", "0", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


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


def test_a_missing_configuration_file(tmp_path):
    assert_refused(serve("--data-dir", str(tmp_path), "--config", str(tmp_path / "missing.toml")), "does not exist")


def test_a_malformed_configuration_file(tmp_path):
    config = tmp_path / "broker.toml"
    config.write_text('"fsync" = = "batch"\n')
    assert_refused(serve("--data-dir", str(tmp_path / "data"), "--config", str(config)), "not valid TOML")


def test_a_configuration_file_that_is_a_directory(tmp_path):
    assert_refused(serve("--data-dir", str(tmp_path / "data"), "--config", str(tmp_path)), "is a directory")


def test_an_unknown_setting_in_the_configuration_file(tmp_path):
    config = tmp_path / "broker.toml"
    config.write_text('"no.such.setting" = 1\n')
    assert_refused(serve("--data-dir", str(tmp_path / "data"), "--config", str(config)), "no.such.setting")


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_bad_setting_value(tmp_path, how):
    if how == "flag":
        result = serve("--data-dir", str(tmp_path / "data"), "--fsync", "sometimes")
    else:
        result = serve("--data-dir", str(tmp_path / "data"), env={"GROUPCOORD_GROUP_MAX_SIZE": "many"})
    assert_refused(result, "bad setting")


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
