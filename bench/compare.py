"""groupcoord and Apache Kafka side by side, in one invocation, on this machine:

    python -m bench.compare                       # every figure, medians of 3 runs (estimated 45-60 minutes)
    python -m bench.compare --quick               # small sizes, 1 run: a smoke test of the harness
    python -m bench.compare --only heartbeat,commit --runs 5
    python -m bench.compare --only big_group,small_groups,kip848,ctp,ctp_combinations   # the group-scale figures
    python -m bench.compare --brokers groupcoord  # without Kafka (no Java needed)
    python -m bench.compare --groupcoord-python .venv-bench/bin/python   # the daemon on another CPython build

For each figure and each run, groupcoord and then Kafka (the cached 4.3.1 jars, production JVM flags, see
bench/kafka_server.py) are started fresh in a temp dir on 127.0.0.1, pinned to the first core, their
`__consumer_offsets` warmed (bench/warm.py), measured by the same load generator pinned to the other cores,
and stopped. Each measurement runs in a fresh process of its own (bench/isolated.py): a Python client must
not be slowed by what earlier figures left on the harness's heap. Interleaving the brokers run by run keeps slow drift of a shared machine from favouring one.
groupcoord runs on this interpreter unless ``--groupcoord-python`` names another (a virtualenv with this tree
installed; ``make bench-compare BENCH_PYTHON=/usr/bin/python3.11`` makes one): Kafka runs with production JVM
flags, and the daemon's counterpart is a production build of CPython (PGO and LTO, as distributions and the
``python`` images build it), which pyenv's default build is not (bench/interpreter.py). The interpreter and how
fast it ran a reference loop are printed with the table, and the bare-loop ceiling runs on it too.
The table goes to stdout, progress to stderr, every sample to bench/results/compare-<time>.json.

Figures, not pass/fail: the exit status is 0 even when a figure failed on a broker (the table says so).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import subprocess
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from . import compare_report as report
from . import isolated
from .compare_figures import FIGURE_LIMIT_S, FIGURES, FULL, QUICK, Figure, Sizes, ceiling
from .interpreter import daemon_interpreter, reference_loop_ms
from .kafka_server import GROUPCOORD_SETTINGS, KAFKA_LABEL, PRODUCTION_JVM_OPTIONS, kafka
from .servers import bare, groupcoord
from .warm import warm
from .wire_bench import _cores

RESULTS_DIR = Path(__file__).resolve().parent / "results"
BROKERS = (report.GROUPCOORD, report.KAFKA)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def started(broker: str, fsync: str | None, server_cores: list[int] | None,
            settings: tuple[tuple[str, str], ...] = (), python: str = sys.executable) -> Iterator[tuple[str, float]]:
    """(bootstrap, seconds to serving) of a fresh broker; the same group settings on both (kafka_server),
    plus the figure's own ``settings`` (Kafka's names) on both; groupcoord on ``python``."""
    if broker == report.KAFKA:
        with kafka(server_cores, dict(settings)) as ready:
            yield ready
    else:
        extra = {name.replace(".", "_"): value for name, value in settings}
        with groupcoord(server_cores, fsync=fsync, python=python, **{**GROUPCOORD_SETTINGS, **extra}) as ready:
            yield ready


def targets(figure: Figure, brokers: list[str]) -> list[tuple[str, str | None]]:
    """groupcoord at each fsync policy the figure reads, then Kafka (which has no fsync policy: it leaves
    flushing to the OS and relies on replication, i.e. it is closest to fsync=never)."""
    chosen: list[tuple[str, str | None]] = []
    if report.GROUPCOORD in brokers:
        chosen += [(report.GROUPCOORD, fsync) for fsync in figure.groupcoord_fsyncs]
    if report.KAFKA in brokers:
        chosen.append((report.KAFKA, None))
    return chosen


def measure_once(figure: Figure, broker: str, fsync: str | None, sizes: Sizes, shared: dict,
                 server_cores: list[int] | None, client_cores: list[int] | None,
                 python: str = sys.executable) -> dict[str, float]:
    with started(broker, fsync, server_cores, figure.settings, python) as (bootstrap, startup_s):
        warm_s = warm(bootstrap)
        log(f"  {report.target_id(broker, fsync)} at {bootstrap}: serving after {startup_s:.2f} s, "
            f"offsets warm in {warm_s:.2f} s")
        # In a fresh process of its own: the harness's heap, grown by earlier figures, must not slow a
        # figure's Python clients (bench/isolated.py).
        values = isolated.measure(figure.name, bootstrap, sizes, shared, client_cores, FIGURE_LIMIT_S + 60.0)
    return {**values, "startup_ms": startup_s * 1000, "warm_s": warm_s}


def run_figure(figure: Figure, sizes: Sizes, runs: int, brokers: list[str], server_cores: list[int] | None,
               client_cores: list[int] | None, python: str = sys.executable) -> report.FigureResult:
    """``python``: groupcoord's interpreter, the bare-loop ceiling's too."""
    result = report.FigureResult(figure.name)
    for run in range(1, runs + 1):
        log(f"{figure.name}: run {run}/{runs}: {figure.description}")
        shared: dict[str, float] = {}
        if figure.needs_ceiling:
            try:
                with bare(server_cores, python) as (address, _):
                    shared["ceiling"] = ceiling(address, sizes, client_cores)
            except Exception as exc:  # the brokers' own rates are still worth having; their ratios are not
                result.fail(report.CEILING, f"run {run}: {type(exc).__name__}: {exc}"[:300])
                shared["ceiling"] = float("nan")
            else:
                result.add(report.CEILING, dict(shared))
            log(f"  bare ceiling {shared['ceiling']:,.0f} req/s")
        for broker, fsync in targets(figure, brokers):
            target = report.target_id(broker, fsync)
            try:
                values = measure_once(figure, broker, fsync, sizes, shared, server_cores, client_cores, python)
            except Exception as exc:  # a figure failing on one broker is a result too; keep going
                traceback.print_exc(file=sys.stderr)
                result.fail(target, f"run {run}: {type(exc).__name__}: {exc}"[:300])
                continue
            result.add(target, values)
            log(f"  {target}: " + ", ".join(f"{k}={v:,.2f}" for k, v in values.items()))
    return result


def _versions() -> dict[str, str]:
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        java = "unavailable"
    return {"python": platform.python_version(), "java": java, "machine": platform.machine(),
            "cpus": str(os.cpu_count())}


def parse_only(text: str | None) -> list[Figure]:
    if not text:
        return list(FIGURES.values())
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise SystemExit(f"unknown figure(s) {unknown}; choose from {', '.join(FIGURES)}")
    return [f for f in FIGURES.values() if f.name in names]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=None, help="runs per figure and broker (default 3; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="small sizes and 1 run: proves the harness works")
    parser.add_argument("--only", default=None, help=f"comma-separated figures from: {', '.join(FIGURES)}")
    parser.add_argument("--brokers", default=",".join(BROKERS), help="comma-separated: groupcoord,kafka")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--groupcoord-python", default=sys.executable,
                        help="the interpreter groupcoord (and the bare-loop ceiling) runs on: a virtualenv's python "
                             "with this tree installed (default: this one)")
    ns = parser.parse_args(argv)
    # A SIGTERM unwinds like Ctrl-C, so the broker being measured is stopped (Kafka runs in a session of its
    # own and would otherwise outlive us).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes = QUICK if ns.quick else FULL
    runs = max(1, min(ns.runs if ns.runs is not None else (1 if ns.quick else 3), 20))
    brokers = [b for b in ns.brokers.split(",") if b]
    if not set(brokers) <= set(BROKERS):
        raise SystemExit(f"--brokers: choose from {', '.join(BROKERS)}")
    figures = parse_only(ns.only)
    server_cores, client_cores = _cores()
    core = server_cores[0] if server_cores else None
    other = ns.groupcoord_python != sys.executable
    interpreter = daemon_interpreter(ns.groupcoord_python, core, this_tree=other)
    harness_loop_ms = reference_loop_ms(sys.executable, core) if other else interpreter.reference_loop_ms
    if client_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, client_cores)  # in-process clients (group benches, confluent-kafka) stay off the server core
    began = datetime.now(timezone.utc)
    log(f"server cores {server_cores}, client cores {client_cores}, {runs} run(s), "
        f"{'quick' if ns.quick else 'full'} sizes, brokers {brokers}, figures {[f.name for f in figures]}; "
        f"groupcoord on {interpreter.label()}")
    results = {f.name: run_figure(f, sizes, runs, brokers, server_cores, client_cores, interpreter.python)
               for f in figures}
    title = (f"groupcoord vs {KAFKA_LABEL}: median (min-max) of {runs} run(s) each, {'quick' if ns.quick else 'full'} "
             f"sizes, {began:%Y-%m-%d %H:%M} UTC; servers on cores {server_cores}, load on {client_cores}")
    print(title)
    print(report.render(figures, results, sizes, KAFKA_LABEL))
    print(f"groupcoord: python -m groupcoord serve --fsync batch (never where the row says) "
          + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in GROUPCOORD_SETTINGS.items()))
    print(f"groupcoord's interpreter: {interpreter.label()}; the clients' (this harness's) {sys.executable}: "
          f"reference loop {harness_loop_ms:.0f} ms")
    print(f"kafka: KRaft single node, java {' '.join(PRODUCTION_JVM_OPTIONS)}, pinned with taskset")
    print(report.settings_note())
    path = ns.results_dir / f"compare-{began:%Y%m%dT%H%M%SZ}{'-quick' if ns.quick else ''}.json"
    meta = {"title": title, "started": began.isoformat(), "runs": runs, "quick": ns.quick, "brokers": brokers,
            "server_cores": server_cores, "client_cores": client_cores, "versions": _versions(),
            "groupcoord_settings": GROUPCOORD_SETTINGS, "groupcoord_python": interpreter.as_dict(),
            "harness_python": {"python": sys.executable, "reference_loop_ms": harness_loop_ms},
            "kafka_jvm_options": list(PRODUCTION_JVM_OPTIONS)}
    report.write_json(path, meta, figures, results, sizes)
    print(f"all samples: {path}")


if __name__ == "__main__":
    main()
