"""Start the servers under test as child processes pinned to their own cores."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Iterator

_LISTENING = re.compile(r"listening on (\S+:\d+)")


class Started(tuple):
    """What a started server yields: ``(bootstrap address, seconds from spawn to 'listening on')``, the pair
    every bench unpacks, and ``.pid``, the child process, for the benches that read its CPU or memory from
    /proc (instead of finding it again through its listening socket)."""

    pid: int

    def __new__(cls, bootstrap: str, seconds: float, pid: int) -> "Started":
        started = super().__new__(cls, (bootstrap, seconds))
        started.pid = pid
        return started


@contextmanager
def child_server(cmd: list[str], cores: list[int] | None, timeout: float = 30.0,
                 env: dict[str, str] | None = None, cwd: str | None = None) -> Iterator[Started]:
    """Yields (bootstrap address, seconds from spawn to 'listening on'), with the child's ``pid``."""

    def pin() -> None:
        if cores and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, cores)

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=pin, env=env,
                            cwd=cwd)
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            m = _LISTENING.search(line)
            if m and not found:
                found.append(m.group(1))
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        if not ready.wait(timeout):
            raise RuntimeError(f"{cmd[:4]} did not start within {timeout}s")
        yield Started(found[0], time.perf_counter() - t0, proc.pid)
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, ten seconds to exit, then SIGKILL: how every bench ends a server it started."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def groupcoord(cores: list[int] | None, fsync: str = "never", python: str = sys.executable,
               **settings: str) -> Iterator[Started]:
    """The daemon on ``python`` (a virtualenv's interpreter with this tree installed: bench/interpreter.py)."""
    env = _installed_env(cores, python)
    with tempfile.TemporaryDirectory(prefix="groupcoord-bench-") as data:
        with child_server(_daemon_command(data, fsync, settings, python), cores, env=env) as started:
            yield started


def _daemon_command(data: str, fsync: str, settings: dict[str, str], python: str = sys.executable) -> list[str]:
    # `python -m groupcoord`, the stable entry point: the CLI module behind it may move. `python`: another tree's
    # interpreter (its virtualenv imports that tree's groupcoord), for an A/B.
    cmd = [python, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
           "--fsync", fsync, "--metrics-port", "0", "--log-level", "warning", "--log-format", "json"]
    for key, value in settings.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    return cmd


_bytecode_written: set[str] = set()  # the interpreters whose first start has compiled the tree


def _installed_env(cores: list[int] | None, python: str = sys.executable) -> dict[str, str]:
    """The environment an installed daemon runs in: its bytecode compiled (pip compiles what it installs).
    A source tree under PYTHONDONTWRITEBYTECODE would compile every module at every start (about 200 ms of
    the start-up figure); the bytecode goes to a cache of the benches' own instead (the source tree is not
    touched), written once per bench process and interpreter (``python``) by an uncounted start on a data directory
    of its own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), f"groupcoord-bench-pycache-{os.getuid()}")
    if python not in _bytecode_written:
        with tempfile.TemporaryDirectory(prefix="groupcoord-bench-bytecode-") as data:
            with child_server(_daemon_command(data, "never", {}, python), cores, env=env):
                _bytecode_written.add(python)
    return env


@contextmanager
def bare(cores: list[int] | None, python: str = sys.executable) -> Iterator[Started]:
    with child_server([python, "-m", "bench.bare_server", "--listen", "127.0.0.1:0"], cores) as started:
        yield started
