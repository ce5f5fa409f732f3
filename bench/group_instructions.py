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

from .group_cpu import form_groups
from .kafka_server import GROUPCOORD_SETTINGS
from .servers import _daemon_command, _installed_env, child_server

WARM_GROUPS = 100
START_SECONDS = 300.0  # the daemon's start-up under valgrind, on a loaded machine


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


def _warm(bootstrap: str, groups: int) -> None:
    """Warm-up groups, retried while the coordinator partitions are still loading (slowly, under valgrind)."""
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            form_groups(bootstrap, groups, 1 if len(os.sched_getaffinity(0)) >= 2 else None)
            return
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


def one_run(groups: int, fsync: str, warm_groups: int = WARM_GROUPS) -> float:
    """Instructions of the daemon per group formed, over ``groups`` groups after ``warm_groups``."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is not installed")
    with tempfile.TemporaryDirectory(prefix="groupcoord-bench-") as data, \
            tempfile.TemporaryDirectory(prefix="groupcoord-callgrind-") as dumps:
        prefix = os.path.join(dumps, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p", "--dump-instr=no",
               *_daemon_command(data, fsync, GROUPCOORD_SETTINGS)]
        cores = [0] if len(os.sched_getaffinity(0)) >= 2 else None
        with child_server(cmd, cores, timeout=START_SECONDS, env=_installed_env(cores)) as started:
            _warm(started[0], warm_groups)
            subprocess.run(["callgrind_control", "-z", str(started.pid)], check=True, capture_output=True)
            form_groups(started[0], groups, 1 if cores else None)
            subprocess.run(["callgrind_control", "-d", str(started.pid)], check=True, capture_output=True)
            # the dump asked for is the daemon's first (numbered .1): the one at exit covers the shutdown
            measured = glob.glob(f"{prefix}.{started.pid}.1")
            if not measured:
                raise RuntimeError(f"callgrind wrote no dump for pid {started.pid}")
            return total_instructions(measured[0]) / groups


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
