"""Instructions the daemon executes per classic group of 3 formed (valgrind callgrind's Ir count): the figure
behind bench.group_cpu that the load of other processes does not move.

    python -m bench.group_instructions                 # 300 groups, fsync=never
    python -m bench.group_instructions --groups 500 --fsync batch

On the shared 2-core development machine bench.group_cpu's CPU time per group wanders by ±30 % between
identical runs while other sessions load it (caches and the other hyperthread are shared), so a change worth a
few percent cannot be told from noise there. Instructions executed are nearly deterministic for the same work:
this starts the daemon (as bench.group_cpu does, same settings) under ``valgrind --tool=callgrind``, forms
warm-up groups, zeroes the counters (``callgrind_control -z``), forms the measured groups with the usual
client process, dumps the counters (``callgrind_control -d``) and divides. The daemon runs 50-100x slower
under valgrind, so the counts are small and a run takes minutes; the instructions are the event loop's and
every thread's (the log's fsync thread included), the kernel's are not counted. fsync=never by default:
under valgrind a slow fsync can exceed the coordinator's write timeout and change what the groups see.
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
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from .group_cpu import form_groups
from .kafka_server import GROUPCOORD_SETTINGS
from .servers import Started, _daemon_command, _installed_env, child_server

T = TypeVar("T")

WARM_GROUPS = 100
START_SECONDS = 300.0  # the daemon's start-up under valgrind, on a loaded machine
SETTLE_WINDOW_S = 2.0
IDLE_INSTRUCTIONS = 1_000_000  # in SETTLE_WINDOW_S: ~55 thousand when idle, 20-160 million while warming up


def total_instructions(dump: str) -> int:
    """The Ir total of one callgrind dump file (its ``summary:`` line, else its ``totals:`` line)."""
    found = None
    with open(dump) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
            if line.startswith("totals:"):
                found = int(line.split()[1])
    if found is None:
        raise ValueError(f"{dump}: no summary or totals line (not a callgrind dump?)")
    return found


def asked_dump(prefix: str, pid: int, number: int, keep: str | None = None) -> int:
    """The instructions of the ``number``-th dump process ``pid`` was asked for (``callgrind_control -d``; callgrind
    numbers them from 1 in order, the one at exit comes after them and covers the shutdown), its file named
    ``prefix.pid.number``; ``keep``: a path to copy it to (for ``callgrind_annotate``)."""
    measured = glob.glob(f"{prefix}.{pid}.{number}")
    if not measured:
        raise RuntimeError(f"callgrind wrote no dump {number} for pid {pid}")
    if keep is not None:
        shutil.copyfile(measured[0], keep)
    return total_instructions(measured[0])


def retry_while_starting(attempt: Callable[[], object]) -> None:
    """``attempt()`` retried on RuntimeError (the bench clients' "not ready yet") while the daemon, slow under
    valgrind, is still loading its coordinator partitions; bounded by START_SECONDS."""
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            attempt()
            return
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


class CallgrindDaemon:
    """The daemon started under ``valgrind --tool=callgrind`` (pinned to core 0 on a 2-core machine): ``bootstrap``
    to load it, ``measure(work)`` for the instructions it executes while ``work()`` runs, the dumps in ``prefix``."""

    def __init__(self, started: Started, prefix: str) -> None:
        self.bootstrap = started[0]
        self.pid = started.pid
        self.prefix = prefix
        self.dumps = 0

    def measure(self, work: Callable[[], T], keep: str | None = None) -> tuple[int, T]:
        """(instructions of every thread of the daemon while ``work()`` ran, what it returned): counters zeroed
        before (``callgrind_control -z``) and dumped after (``-d``); ``keep``: a path to copy the dump to."""
        subprocess.run(["callgrind_control", "-z", str(self.pid)], check=True, capture_output=True)
        result = work()
        subprocess.run(["callgrind_control", "-d", str(self.pid)], check=True, capture_output=True)
        self.dumps += 1
        return asked_dump(self.prefix, self.pid, self.dumps, keep), result


    def settle(self) -> int:
        """Wait until the daemon is idle when nothing asks anything of it, and return the windows waited. After
        ``listening on`` the daemon imports, in the loop's idle moments, what the common APIs' first requests
        would (coordinator/apis/warm_up.py): a second at full speed, a minute or more under valgrind, where
        those imports (~300 M instructions) would otherwise land in the measured stretch. Windows of
        SETTLE_WINDOW_S are counted until one executes fewer than IDLE_INSTRUCTIONS; bounded by START_SECONDS."""
        deadline = time.monotonic() + START_SECONDS
        windows = 0
        while True:
            windows += 1
            spent, _ = self.measure(lambda: time.sleep(SETTLE_WINDOW_S))
            if spent < IDLE_INSTRUCTIONS:
                return windows
            if time.monotonic() > deadline:
                raise RuntimeError(f"the daemon never settled: {spent:,} instructions in {SETTLE_WINDOW_S} s idle")


def client_cores() -> list[int] | None:
    """Core 1 for the bench's clients when the daemon has core 0 (a machine of 2 cores or more)."""
    return [1] if len(os.sched_getaffinity(0)) >= 2 else None


@contextmanager
def callgrind_daemon(fsync: str, settings: dict[str, str], python: str = sys.executable,
                     cwd: str | None = None) -> Iterator[CallgrindDaemon]:
    """A fresh daemon (``python -m groupcoord serve``, a temporary data directory) under callgrind."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is not installed")
    with tempfile.TemporaryDirectory(prefix="groupcoord-bench-") as data, \
            tempfile.TemporaryDirectory(prefix="groupcoord-callgrind-") as dumps:
        prefix = os.path.join(dumps, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p", "--dump-instr=no",
               *_daemon_command(data, fsync, settings, python)]
        cores = [0] if client_cores() else None
        with child_server(cmd, cores, timeout=START_SECONDS, env=_installed_env(cores), cwd=cwd) as started:
            yield CallgrindDaemon(started, prefix)


def one_run(groups: int, fsync: str, warm_groups: int = WARM_GROUPS) -> float:
    """Instructions of the daemon per group formed, over ``groups`` groups after ``warm_groups``."""
    with callgrind_daemon(fsync, GROUPCOORD_SETTINGS) as daemon:
        cores = client_cores()
        retry_while_starting(lambda: form_groups(daemon.bootstrap, warm_groups, cores and cores[0]))
        daemon.settle()
        instructions, _ = daemon.measure(lambda: form_groups(daemon.bootstrap, groups, cores and cores[0]))
        return instructions / groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=300)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--fsync", default="never", choices=["never", "batch", "always"])
    parser.add_argument("--warm-groups", type=int, default=WARM_GROUPS)
    ns = parser.parse_args()
    for _ in range(max(1, ns.runs)):
        per = one_run(ns.groups, ns.fsync, ns.warm_groups)
        print(f"fsync={ns.fsync} {ns.groups:,} groups of 3: daemon {per / 1e6:.3f} M instructions per group "
              f"({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
