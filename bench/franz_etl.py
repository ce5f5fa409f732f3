"""franz-go's own consumer-group ETL test, run against a broker and timed: the issue's workload, by its client.

The issue measured "an independent client library's consumer-group ETL test" (269 s against groupcoord, 107 s
against Kafka 4.3.1): that is ``TestGroupETL`` of franz-go's kgo package (pkg/kgo/group_test.go). One producer
writes N records (keys 0..N-1, a 64-byte body, snappy, idempotent) to a topic of 7, 11 or 31 partitions; six
sub-tests, four at a time, each chain three consumer groups (topic 1 -> 2 -> 3 -> 4), every member consuming,
producing each record on to the next topic and committing as it goes, with members joining after 5 s and some
leaving early (rebalances under load), for the assignor/protocol/membership combinations range,
cooperative-sticky, range and sticky over KIP-848, cooperative-sticky static and sticky KIP-848 static. The test
checks that every record arrives once and in order at every level. It is the client's test, unmodified: we
build it from the module as published and only point it at the broker (``KGO_SEEDS``), with a replication
factor of 1 (``KGO_TEST_RF``) and the record count (``KGO_TEST_RECORDS``).

The figure is the test's wall time (all six sub-tests); each sub-test's own "completed in" is kept too.

    python -m bench.franz_etl --records 50000                        # starts its own groupcoord (fsync=batch)
    python -m bench.franz_etl --records 500000 --bootstrap HOST:PORT # or measures any broker
    python -m bench.franz_etl --records 500000 --kafka --trace kafka.csv  # or a fresh Kafka 4.3.1, with the
                                                     # client's and the broker's use of their cores every 0.5 s

Needs the ``go`` tool and the module from the Go module proxy (or its cache); the test binary is built once
into ~/.cache/groupcoord. Bounded: the test's own timeout and a kill past ``RUN_LIMIT_S``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .cpu_sampler import BUSY, CpuSampler, CpuUse
from .memory_bench import server_pid
from .servers import groupcoord
from .wire_bench import _cores

MODULE = "github.com/twmb/franz-go"
VERSION = "v1.22.3"
CACHE = Path(os.environ.get("GROUPCOORD_CACHE", Path.home() / ".cache" / "groupcoord")) / f"franz-go-{VERSION}"
BUILD_LIMIT_S = 600.0
RUN_LIMIT_S = 900.0
_COMPLETED = re.compile(r"TestGroupETL/(\S+) completed in (\S+)")


class FranzEtlUnavailable(RuntimeError):
    """The test binary cannot be built here (no ``go`` tool, or the module cannot be fetched)."""


@dataclass(frozen=True)
class EtlResult:
    seconds: float                                       # the whole test, as the client's test runner times it
    subtests: dict[str, float] = field(default_factory=dict)  # each combination's own "completed in"
    client: CpuUse | None = None                         # the test process's CPU (every client of the test)
    broker: CpuUse | None = None                         # the broker's, when its pid was given
    trace: list[tuple[float, dict[str, float]]] = field(default_factory=list)  # CpuSampler.trace of the run


def test_binary() -> Path:
    """The kgo package's test binary, built once from the published module (``go test -c``)."""
    binary = CACHE / "kgo.test"
    if binary.exists():
        return binary
    go = shutil.which("go")
    if go is None:
        raise FranzEtlUnavailable("the go tool is not installed")
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    try:
        found = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@{VERSION}"], capture_output=True,
                               text=True, timeout=BUILD_LIMIT_S, env=env, cwd=tempfile.gettempdir())
        source = Path(json.loads(found.stdout)["Dir"])
    except (subprocess.SubprocessError, ValueError, KeyError) as exc:
        raise FranzEtlUnavailable(f"cannot fetch {MODULE}@{VERSION}: {exc}") from exc
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="franz-go-") as work:
        # The module cache is read-only; a copy is a module of its own that `go test -c` can build in.
        tree = Path(work) / "franz-go"
        shutil.copytree(source, tree)
        for path in tree.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
        built = subprocess.run([go, "test", "-c", "-o", str(binary) + ".partial", "."], cwd=tree / "pkg" / "kgo",
                               capture_output=True, text=True, timeout=BUILD_LIMIT_S, env=env)
        if built.returncode != 0:
            raise FranzEtlUnavailable(f"go test -c failed: {built.stderr[-500:]}")
    os.replace(str(binary) + ".partial", binary)
    return binary


def run(bootstrap: str, records: int, client_cores: list[int] | None = None,
        broker_pid: int | None = None) -> EtlResult:
    """One run of TestGroupETL against ``bootstrap``; raises with the test's output when it fails. The test
    process's CPU, and the broker's when ``broker_pid`` is given, are sampled while it runs (bench.cpu_sampler):
    which of the two cores was saturated, and for how long."""
    binary = test_binary()
    env = {**os.environ, "KGO_SEEDS": bootstrap, "KGO_TEST_RF": "1", "KGO_TEST_RECORDS": str(records),
           "KGO_LOG_LEVEL": "none"}
    pin = ["taskset", "-c", ",".join(map(str, client_cores))] if client_cores else []  # (taskset execs: one pid)
    command = [*pin, str(binary), "-test.run", "^TestGroupETL$", "-test.v", "-test.count", "1",
               "-test.timeout", f"{RUN_LIMIT_S - 30:.0f}s"]
    sampler = CpuSampler()
    began = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          cwd=binary.parent) as test:
        sampler.start({"client": test.pid} | ({} if broker_pid is None else {"broker": broker_pid}))
        limit = threading.Timer(RUN_LIMIT_S, test.kill)
        limit.start()
        try:
            output = test.stdout.read()  # (to its end: the test has exited, and is not reaped yet)
            seconds = time.monotonic() - began
        finally:
            limit.cancel()
            use = sampler.stop()         # (its last sample read from the unreaped process: all of its CPU)
        test.wait()
    if seconds >= RUN_LIMIT_S:
        raise RuntimeError(f"TestGroupETL did not finish within {RUN_LIMIT_S:.0f} s: killed")
    if test.returncode != 0:
        failures = [line for line in output.splitlines() if "FAIL" in line or "Error" in line or "panic" in line]
        raise RuntimeError(f"TestGroupETL failed (exit {test.returncode}): " + " | ".join(failures[:8])[:800])
    return EtlResult(seconds, {name: _go_duration(text) for name, text in _COMPLETED.findall(output)},
                     use["client"], use.get("broker"), sampler.trace)


def _go_duration(text: str) -> float:
    """Seconds of a Go ``time.Duration`` string such as ``2m3.31s`` or ``812.5ms``."""
    total = 0.0
    for number, unit in re.findall(r"([0-9.]+)(h|ms|µs|us|ns|m|s)", text):
        total += float(number) * {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}[unit]
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.franz_etl", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=None, help="measure this broker instead of starting groupcoord")
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--fsync", choices=["always", "batch", "never"], default="batch",
                        help="the groupcoord this starts (not read with --bootstrap or --kafka)")
    parser.add_argument("--kafka", action="store_true", help="start the cached Kafka 4.3.1 (bench.compare's flags) "
                                                            "instead of groupcoord")
    parser.add_argument("--trace", type=Path, default=None,
                        help="write the share of its core the client and the broker used, every 0.5 s, as CSV")
    ns = parser.parse_args(argv)
    server_cores, client_cores = _cores()

    def report(result: EtlResult) -> None:
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in sorted(result.subtests.items()))
        print(f"TestGroupETL {ns.records:,} records: {result.seconds:.1f} s ({parts})")
        for side, use in (("client", result.client), ("broker", result.broker)):
            if use is not None:
                print(f"  {side}: {use.cpu_s:.1f} s of CPU, its core >= {BUSY} busy for {use.saturated_s:.1f} s")
        if ns.trace is not None:
            write_trace(result, ns.trace)
            print(f"  the cores' use every 0.5 s: {ns.trace}")

    if ns.bootstrap:
        report(run(ns.bootstrap, ns.records, client_cores, broker_pid=server_pid(ns.bootstrap)))
        return
    # (imported here: they import the test reference's broker helpers, which bench.compare's figure processes,
    # importing this module, do not need)
    from .kafka_server import GROUPCOORD_SETTINGS, kafka
    if ns.kafka:
        with kafka(server_cores) as (address, _):
            report(run(address, ns.records, client_cores, broker_pid=server_pid(address)))
        return
    with groupcoord(server_cores, fsync=ns.fsync, **GROUPCOORD_SETTINGS) as started:
        report(run(started[0], ns.records, client_cores, broker_pid=started.pid))


def write_trace(result: EtlResult, path: Path) -> None:
    """The run's trace as CSV: seconds from the test's start, then the share of one core the client and the broker
    used in the interval ending then (empty where a process could not be read)."""
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["seconds", "client", "broker"])
        for seconds, shares in result.trace:
            out.writerow([f"{seconds:.2f}", *(f"{shares[name]:.3f}" if name in shares else ""
                                               for name in ("client", "broker"))])


if __name__ == "__main__":
    main()
