"""Milliseconds of the daemon's CPU per classic group of 3 formed, and of the group-forming client's: the
figure behind bench.compare's small_groups row that a shared machine does not blur.

    python -m bench.group_cpu                      # fsync=batch, 3,000 groups, 3 runs
    python -m bench.group_cpu --fsync never --groups 10000 --runs 1

The daemon (``python -m groupcoord serve``, as bench.compare starts it, with the same group settings) is
pinned to core 0 and the client (bench.group_bench.many_groups: 200 workers of three connections, each
forming groups of 3 one after another) runs in its own process pinned to core 1. The daemon's user and
system CPU time, every thread (the log's fsync thread included), is read from /proc/PID/stat around the
measured run (after a warm-up of 200 groups) and divided by the groups formed; the client's is its own
process's, start-up included. small_groups' wall time is about the larger of the two per group times the
groups, so this says which side bounds it and by how much a change moved it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from .kafka_server import GROUPCOORD_SETTINGS
from .server_cpu import cpu_seconds, thread_cpu
from .servers import groupcoord

WARM_GROUPS = 200

_CLIENT = """
import os, resource, sys
os.sched_setaffinity(0, [int(sys.argv[3])])
from bench import group_bench
seconds = group_bench.run_client(group_bench.many_groups(sys.argv[1], int(sys.argv[2])))
usage = resource.getrusage(resource.RUSAGE_SELF)
print(seconds, usage.ru_utime + usage.ru_stime)
"""


def form_groups(bootstrap: str, groups: int, core: int | None) -> tuple[float, float]:
    """(wall seconds, client CPU seconds) of ``groups`` groups of 3 formed by a client process of its own."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", _CLIENT, bootstrap, str(groups), str(core if core is not None else 0)],
                          capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"the group-forming client failed ({done.returncode}): {done.stderr[-2000:]}")
    wall, cpu = done.stdout.split()
    return float(wall), float(cpu)


def _user_system(pid: int) -> tuple[float, float]:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def one_run(fsync: str, groups: int, warm_groups: int = WARM_GROUPS) -> dict[str, float]:
    """One fresh daemon: ms of its CPU per group (all threads, then user and system), of its event loop's
    thread, and of the client, with the wall seconds."""
    two_cores = len(os.sched_getaffinity(0)) >= 2
    with groupcoord([0] if two_cores else None, fsync=fsync, **GROUPCOORD_SETTINGS) as started:
        bootstrap, pid = started[0], started.pid
        form_groups(bootstrap, warm_groups, 1 if two_cores else None)
        before, threads_before, (user0, sys0) = cpu_seconds(pid), thread_cpu(pid), _user_system(pid)
        wall, client = form_groups(bootstrap, groups, 1 if two_cores else None)
        used, threads_after, (user1, sys1) = cpu_seconds(pid) - before, thread_cpu(pid), _user_system(pid)
    per = 1000.0 / groups
    return {"wall_s": wall, "broker_ms": used * per, "user_ms": (user1 - user0) * per, "system_ms": (sys1 - sys0) * per,
            "loop_ms": (threads_after.get("main", 0.0) - threads_before.get("main", 0.0)) * per,
            "client_ms": client * per}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fsync", default="batch", choices=["never", "batch", "always"])
    parser.add_argument("--groups", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm-groups", type=int, default=WARM_GROUPS)
    ns = parser.parse_args()
    runs = []
    for _ in range(max(1, ns.runs)):
        r = one_run(ns.fsync, ns.groups, ns.warm_groups)
        runs.append(r)
        print(f"fsync={ns.fsync} {ns.groups:,} groups of 3: {r['wall_s']:.2f} s; broker {r['broker_ms']:.3f} ms CPU "
              f"per group (user {r['user_ms']:.3f}, system {r['system_ms']:.3f}; event loop thread "
              f"{r['loop_ms']:.3f}); client {r['client_ms']:.3f} ms (load {os.getloadavg()[0]:.2f})", flush=True)
    runs.sort(key=lambda r: r["broker_ms"])
    median = runs[len(runs) // 2]
    print(f"median of {len(runs)}: broker {median['broker_ms']:.3f} ms CPU per group (min {runs[0]['broker_ms']:.3f}), "
          f"client {median['client_ms']:.3f} ms, {median['wall_s']:.2f} s "
          f"({time.strftime('%H:%M:%S', time.gmtime())} UTC)")


if __name__ == "__main__":
    main()
