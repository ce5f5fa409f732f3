"""Instructions the daemon executes from exec to its `listening on` line (valgrind callgrind's Ir count): the
start-up figure that the load of other processes does not move.

    python -m bench.startup_instructions --runs 3

bench.startup_bench's times move 2x between identical runs on the shared 2-core development machine, so a
change worth 10 % of start-up cannot be told from noise there. Instructions executed are nearly deterministic
for the same work. This runs ``python -m groupcoord serve`` (bench.startup_bench's command and settings) under
``valgrind --tool=callgrind`` with its bytecode cached, as an installed daemon has it (a PYTHONPYCACHEPREFIX of
its own, written by one uncounted start without valgrind; bench/servers.py's ``_installed_env``).

Where the count stops: the daemon goes on (the partitions' load, the warm-up) after `listening on`, and
``callgrind_control -d`` asked for when the line is read would catch a varying part of that. So the daemon runs
behind a few lines (``_STOP_AT_LISTENING``) that replace its stdout with one that ends the process
(``os._exit``) once the line has been written, and callgrind's dump at exit is the count. The wrapper is
``python -c`` plus ``runpy.run_module("groupcoord", alter_sys=True)``, what ``-m`` does: its own cost is a few
hundred thousand instructions, the same for every tree measured. Every thread's instructions are counted, the
kernel's are not. A run takes about a minute (valgrind runs Python 50-100x slower).

A/B another tree: run this module with that tree's interpreter (``/other/.venv/bin/python -m
bench.startup_instructions`` from this tree's directory measures the tree that interpreter's environment
installs as ``groupcoord``: the daemon runs in its data directory, so this directory's sources are not on its
path).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .group_instructions import total_instructions

_STOP_AT_LISTENING = """
import os, runpy, sys
class _StopAtListening:
    def __init__(self, out):
        self.out = out
    def write(self, text):
        n = self.out.write(text)
        if "listening on" in text:
            self.out.flush()
            os._exit(0)
        return n
    def flush(self):
        self.out.flush()
    def __getattr__(self, name):
        return getattr(self.out, name)
sys.stdout = _StopAtListening(sys.stdout)
runpy.run_module("groupcoord", run_name="__main__", alter_sys=True)
"""

TIMEOUT_S = 600.0


def daemon_command(data: str) -> list[str]:
    """bench.startup_bench's daemon command, behind the wrapper that ends it at `listening on`."""
    return [sys.executable, "-c", _STOP_AT_LISTENING, "serve", "--listen", "127.0.0.1:0", "--data-dir", data,
            "--fsync", "batch", "--metrics-port", "0", "--log-level", "warning", "--log-format", "json"]


def installed_env(pycache: str) -> dict[str, str]:
    """The environment with bytecode written to (and then read from) ``pycache``, as bench/servers.py's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def _run(cmd: list[str], env: dict[str, str], cwd: str) -> str:
    """Runs the wrapped daemon to its `listening on`; what it printed on stdout."""
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0 or "listening on" not in done.stdout:
        raise RuntimeError(f"the daemon did not reach 'listening on' (exit {done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def one_run(pycache: str) -> int:
    """Instructions from exec to `listening on`, bytecode read from ``pycache``."""
    env = installed_env(pycache)
    with tempfile.TemporaryDirectory(prefix="groupcoord-startup-") as data, \
            tempfile.TemporaryDirectory(prefix="groupcoord-callgrind-") as dumps:
        out = os.path.join(dumps, "callgrind.out.%p")
        _run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
              *daemon_command(data)], env, data)
        found = glob.glob(os.path.join(dumps, "callgrind.out.*"))
        if len(found) != 1:
            raise RuntimeError(f"expected one callgrind dump, found {found}")
        return total_instructions(found[0])


def write_bytecode(pycache: str) -> None:
    """One uncounted start without valgrind: the bytecode an installed daemon would read."""
    with tempfile.TemporaryDirectory(prefix="groupcoord-startup-") as data:
        _run(daemon_command(data), installed_env(pycache), data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    ns = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory(prefix="groupcoord-startup-pyc-") as pycache:
        write_bytecode(pycache)
        for _ in range(max(1, ns.runs)):
            count = one_run(pycache)
            print(f"{sys.executable}: {count / 1e6:,.1f} M instructions exec to 'listening on' "
                  f"({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
