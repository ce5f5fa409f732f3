"""Offsets pipeline figures: how fast the `consumer_offsets` data source decodes, and what the jobs cost, local
and on a standalone cluster — every answer checked against a plain-Python replay of the same bytes.

1. Writes a `__consumer_offsets` log of `--records` (default 5,000,000) records with tests/pipeline/big_log.py:
   offset commits, expiring commits, tombstones, group metadata of many generations, transactions, several
   segments per offsets partition, and the `--compact` partitions compacted by the project's log cleaner.
2. Replays it in plain Python (tests/pipeline/plain_replay.py): the expected snapshot, history, generations
   and rebalances.
3. (a) Decode rate outside Spark, one core: the biggest segment through the data source's reader
   (`read_segment`, columnar) and through the row-at-a-time reference reader it is checked against.
4. (b) Through Spark, each master in its own process: `count()` over the DataFrame (records/s, and per
   core), then `groupcoord pipeline snapshot`, `history` and `rebalances` as a user runs them (each with
   the integrity summary and Parquet + CSV output), wall time and records/s per core, and their CSVs
   compared with the replay row for row.
5. With `--cluster`: the same on a Spark standalone cluster on loopback (a master and two one-core workers
   from PySpark's `spark-class`, tests/pipeline/spark_cluster.py): records/s per executor core beside
   local mode.

Every figure is printed with the load average at the time (the machine is usually shared).

    python -m bench.pipeline_bench [--records 5000000] [--dir DIR] [--timeout 1500] [--cluster] [--skip-local]
                                   [--count-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOBS = ("snapshot", "history", "rebalances")


def load() -> str:
    return "load %.1f/%.1f/%.1f" % os.getloadavg()


def decode_rates(data: Path) -> tuple[int, float, float, float]:
    """(records, columnar records/s, columnar records/s of CPU time, reference records/s) over the biggest
    segment, one core, in this process, min of 5 (the reference: 1 run). On a shared machine the CPU-time
    rate is the per-core figure (wall time also counts the time other processes held the core)."""
    from groupcoord.pipeline.segment_reader import read_segment, read_segment_rows
    from groupcoord.pipeline.segments import discover_segments

    segment = max(discover_segments(str(data)), key=lambda s: s.size_bytes)

    def rate(reader, runs: int) -> tuple[int, float, float]:
        best = best_cpu = float("inf")
        for _ in range(runs):
            started, cpu = time.perf_counter(), time.process_time()
            rows = sum(batch.num_rows for batch in reader(segment.path, segment.offsets_partition))
            best = min(best, time.perf_counter() - started)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        return rows, rows / best, rows / best_cpu

    rows, fast, fast_cpu = rate(read_segment, 5)
    _, reference, _ = rate(read_segment_rows, 1)
    return rows, fast, fast_cpu, reference


def _cluster_conf(master: str) -> list[str]:
    if master.startswith("local"):
        return []
    return ["--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=1g",
            "--conf", "spark.executor.cores=1"]


def measure(kind: str, directory: str, master: str, out: str, at: str) -> dict:
    """Runs in a child process: one SparkContext, the count or the three jobs."""
    from groupcoord.pipeline.cli import main as cli_main
    from groupcoord.pipeline.session import SessionSettings, parse_conf, read_offsets, start_session

    conf = parse_conf(_cluster_conf(master)[1::2])
    started = time.perf_counter()
    spark = start_session(SessionSettings(master=master, extra=conf))
    result: dict = {"session_seconds": time.perf_counter() - started}
    if kind == "count":
        df = read_offsets(spark, directory)
        for attempt in ("cold", "warm"):
            started = time.perf_counter()
            result[f"rows_{attempt}"] = df.count()
            result[f"seconds_{attempt}"] = time.perf_counter() - started
            result[f"load_{attempt}"] = load()
    else:
        for job in JOBS:
            started = time.perf_counter()
            extra = ["--at", at] if job != "rebalances" else []
            code = cli_main([job, "--data-dir", directory, "--out", f"{out}/{job}", "--master", master,
                             *_cluster_conf(master), *extra])
            result[job] = {"code": code, "seconds": time.perf_counter() - started, "load": load()}
    spark.stop()
    return result


def _child(kind: str, directory: Path, master: str, out: Path, at: int, timeout: float) -> dict | None:
    command = [sys.executable, "-m", "bench.pipeline_bench", "--child", kind, "--dir", str(directory),
               "--master", master, "--out", str(out), "--at", str(at)]
    env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        print(f"  {kind} with {master}: gave up after {timeout:.0f}s")
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        print(f"  {kind} with {master} failed:\n{done.stderr[-2000:]}")
        return None
    return json.loads(lines[-1])


def check_answers(out: Path, replay, at: int) -> list[str]:
    from tests.pipeline.plain_replay import compare_rows, typed_csv_rows

    expected = {"snapshot": replay.snapshot(at), "history": replay.history(at),
                "generations": replay.generations(), "rebalances": replay.rebalances()}
    keys = {"snapshot": ("group", "topic", "partition"), "history": ("group", "topic", "partition"),
            "generations": ("group", "generation"), "rebalances": ("group",)}
    problems = []
    for name, key in keys.items():
        csv_path = out / ("rebalances" if name == "generations" else name) / f"{name}.csv"
        if not csv_path.exists():
            problems.append(f"{name}: no {csv_path}")
            continue
        problems += compare_rows(name, typed_csv_rows(csv_path, expected[name]), expected[name], key)
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--offsets-partitions", type=int, default=10)
    parser.add_argument("--compact", default="3,7", help="offsets partitions to compact (comma-separated)")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the log (default: a temp dir, removed)")
    parser.add_argument("--timeout", type=float, default=1500.0, help="seconds allowed per Spark measurement")
    parser.add_argument("--cluster", action="store_true",
                        help="also measure on a standalone cluster on loopback (a master, two 1-core workers)")
    parser.add_argument("--skip-local", action="store_true", help="only the cluster measurements")
    parser.add_argument("--local", default="local[1],local[2]", help="local masters to measure (comma-separated)")
    parser.add_argument("--count-only", action="store_true",
                        help="only count() through the data source (no jobs, no answers compared)")
    parser.add_argument("--child", choices=["count", "jobs"], help=argparse.SUPPRESS)
    parser.add_argument("--master", default="local[2]", help=argparse.SUPPRESS)
    parser.add_argument("--out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--at", default="0", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, str(args.dir), args.master, args.out, args.at)))
        return

    sys.path.insert(0, str(ROOT))
    from tests.pipeline.big_log import write_big_log
    from tests.pipeline.plain_replay import PlainReplay

    workdir = args.dir or Path(tempfile.mkdtemp(prefix="pipeline-bench-"))
    data = workdir / "data"
    cluster = None
    try:
        started = time.perf_counter()
        compact = tuple(int(p) for p in args.compact.split(",") if p.strip())
        log = write_big_log(data, args.records, groups=args.groups, offsets_partitions=args.offsets_partitions,
                            compact=compact)
        print(f"generated {log.records:,} records ({log.batches:,} batches), {log.bytes_written / 2**20:.0f} MiB in "
              f"{log.segments} segments over {args.offsets_partitions} offsets partitions, partitions {compact} "
              f"compacted, in {time.perf_counter() - started:.1f}s")
        started = time.perf_counter()
        replay = PlainReplay(data)
        records = replay.records
        print(f"plain-Python replay: {records:,} records left after compaction, read in "
              f"{time.perf_counter() - started:.1f}s ({load()})")
        rows, fast, fast_cpu, reference = decode_rates(data)
        print(f"(a) decode without Spark, biggest segment ({rows:,} records), one core, min of 5: {fast:,.0f} "
              f"records/s wall, {fast_cpu:,.0f} per second of CPU through the data source's reader; "
              f"{reference:,.0f} wall through the row-at-a-time reference ({load()})")
        at = log.end_ms
        masters = [] if args.skip_local else [(m, int(m[6:-1])) for m in args.local.split(",") if m.strip()]
        if args.cluster:
            from tests.pipeline.spark_cluster import StandaloneCluster

            # the cluster's JVMs live in their own sessions: a TERM (e.g. from `timeout`) must still stop them
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
            cluster = StandaloneCluster(workdir / "cluster", workers=2, cores_per_worker=1, memory_per_worker="1536m")
            started = time.perf_counter()
            cluster.start()
            print(f"standalone cluster up in {time.perf_counter() - started:.1f}s: {cluster.master_url}, "
                  "2 workers x 1 core")
            masters.append((cluster.master_url, 2))
        for master, cores in masters:
            label = "cluster" if master.startswith("spark://") else master
            result = _child("count", data, master, workdir / "out", at, args.timeout)
            if result:
                for attempt in ("cold", "warm"):
                    n, seconds = result[f"rows_{attempt}"], result[f"seconds_{attempt}"]
                    exact = "exact" if n == records else f"WRONG (expected {records:,})"
                    print(f"(b) count() {label} {attempt}: {n:,} rows ({exact}) in {seconds:.1f}s = {n / seconds:,.0f} "
                          f"records/s, {n / seconds / cores:,.0f} per core ({result[f'load_{attempt}']})")
            if master == "local[1]" or args.count_only:
                continue
            out = workdir / f"out-{label.strip('[]').replace('[', '')}"
            result = _child("jobs", data, master, out, at, args.timeout * 3)
            if result:
                for job in JOBS:
                    entry = result[job]
                    print(f"(b) {job} {label}: {entry['seconds']:.1f}s wall (session already up), "
                          f"{records / entry['seconds'] / cores:,.0f} records/s per core, exit {entry['code']} "
                          f"({entry['load']})")
                problems = check_answers(out, replay, at)
                print(f"    answers {label}: " + ("snapshot, history, generations, rebalances all match the replay"
                                                  if not problems else "DIFFER:\n      " + "\n      ".join(problems)))
    finally:
        if cluster is not None:
            cluster.stop()
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
