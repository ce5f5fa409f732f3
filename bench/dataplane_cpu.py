"""Broker CPU per MB on the data plane: what a shared machine does not blur.

    python -m bench.dataplane_cpu --records 200000 --runs 3

Each run starts a fresh daemon (fsync=batch by default, pinned like bench.dataplane_bench), produces
``--records`` 1 KiB records with acks=1 (bench.dataplane_bench's producer), then reads them back from the
start (its consumer). The daemon's user + system CPU (all threads, /proc/PID/stat) is read around each phase
and divided by the MB moved; MB/s is printed too, with the load average, but depends on what else runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from .dataplane_bench import RECORD, fetch, produce
from .server_cpu import cpu_seconds
from .servers import groupcoord
from .wire_bench import _cores


def one_run(records: int, fsync: str) -> tuple[float, float, float, float]:
    """(produce CPU s/MB, produce MB/s, fetch CPU s/MB, fetch MB/s)."""
    server_cores, _ = _cores()
    with groupcoord(server_cores, fsync=fsync) as started:
        bootstrap, pid = started[0], started.pid
        produce(bootstrap, f"warm-{uuid.uuid4().hex[:6]}", min(records, 20_000), "1")
        topic = f"cpu-{uuid.uuid4().hex[:6]}"
        before = cpu_seconds(pid)
        sent, elapsed = produce(bootstrap, topic, records, "1")
        produced_mb = sent * RECORD / 1e6
        p_cpu = (cpu_seconds(pid) - before) / produced_mb
        p_rate = produced_mb / elapsed
        before = cpu_seconds(pid)
        got, nbytes, elapsed = fetch(bootstrap, topic, sent)
        fetched_mb = nbytes / 1e6
        f_cpu = (cpu_seconds(pid) - before) / max(fetched_mb, 1e-9)
        f_rate = fetched_mb / elapsed
        if got != sent:
            print(f"   fetched {got} of {sent} records")
        return p_cpu, p_rate, f_cpu, f_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--fsync", default="batch", choices=["always", "batch", "never"])
    parser.add_argument("--runs", type=int, default=3)
    ns = parser.parse_args()
    runs = []
    for _ in range(max(1, ns.runs)):
        p_cpu, p_rate, f_cpu, f_rate = one_run(ns.records, ns.fsync)
        runs.append((p_cpu, p_rate, f_cpu, f_rate))
        print(f"produce acks=1: {p_cpu * 1e3:6.2f} ms CPU/MB {p_rate:7.1f} MB/s   "
              f"fetch: {f_cpu * 1e3:6.2f} ms CPU/MB {f_rate:7.1f} MB/s   (load {os.getloadavg()[0]:.2f})", flush=True)
    med = [statistics.median(column) for column in zip(*runs)]
    print(f"median of {len(runs)}: produce {med[0] * 1e3:.2f} ms CPU/MB {med[1]:.1f} MB/s; "
          f"fetch {med[2] * 1e3:.2f} ms CPU/MB {med[3]:.1f} MB/s  ({time.strftime('%H:%M:%S', time.gmtime())} UTC)")


if __name__ == "__main__":
    main()
