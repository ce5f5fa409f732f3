"""Offsets pipeline figures: how fast the `consumer_offsets` data source decodes, and how long a snapshot takes.

1. Generates a `__consumer_offsets` log of `--records` (default 5,000,000) offset commits from
   `--groups` groups (5 partitions per commit, realistic keys, values with metadata and leader
   epoch) spread over `--offsets-partitions` partitions in ~16 MiB segments. Generation is fast
   because a few hundred template batches are encoded once with the project's codecs and then
   copied with their base offset restamped (the CRC does not cover it).
2. Decode rate without Spark: one segment through `pipeline.segment_reader.read_segment`.
3. Decode rate through Spark: `count()` over the DataFrame with local[1] and with local[2]
   (records/s, and per core).
4. The snapshot job's wall time with local[2]: `groupcoord pipeline snapshot` in-process after the
   session is up (read and cache, integrity summary, resolve, write Parquet and CSV).

5. With `--cluster`: the same count() and snapshot on a Spark standalone cluster started on loopback
   (a master and two one-core workers from PySpark's `spark-class`, tests/pipeline/spark_cluster.py):
   records/s per executor core beside local mode.

Every answer is checked, not just timed: count() must equal the records written, and each snapshot
must hold exactly the offsets the generator committed last (groups x 5 partitions), the cluster's
byte for byte the same as local mode's.

Each Spark measurement runs in its own process (one SparkContext per master) under a timeout.

    python -m bench.pipeline_bench [--records 5000000] [--dir DIR] [--timeout 1500] [--cluster]
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

from groupcoord.protocol.record_batch import encode_batch, set_base_offset
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue, encode_key, encode_value

SEGMENT_BYTES = 16 * 1024 * 1024
PARTITIONS_PER_COMMIT = 5
VARIANTS_PER_GROUP = 4
T0 = 1_700_000_000_000


def _templates(groups: int) -> list[list[bytes]]:
    """Per group, a few commit batches (different offsets and times) to cycle through."""
    templates = []
    for g in range(groups):
        group = f"consumer-group-{g:05d}"
        topic = f"events.service-{g % 50:02d}.v1"
        variants = []
        for v in range(VARIANTS_PER_GROUP):
            at = T0 + (g * VARIANTS_PER_GROUP + v) * 1000
            records = [
                (
                    encode_key(OffsetCommitKey(group, topic, p)),
                    encode_value(OffsetCommitValue(1_000_000 + v * 5_000 + p, 7, "host-17:consumer-3", at, None)),
                    (),
                )
                for p in range(PARTITIONS_PER_COMMIT)
            ]
            variants.append(encode_batch(records, base_timestamp=at))
        templates.append(variants)
    return templates


def generate(directory: Path, records: int, groups: int, offsets_partitions: int) -> tuple[int, int, float]:
    """Write the log; returns (records written, bytes written, seconds)."""
    started = time.perf_counter()
    templates = _templates(groups)
    batches = records // PARTITIONS_PER_COMMIT
    state = {p: {"next": 0, "buffer": bytearray(), "base": 0} for p in range(offsets_partitions)}
    total_bytes = 0

    def flush(partition: int) -> None:
        nonlocal total_bytes
        entry = state[partition]
        if entry["buffer"]:
            target = directory / f"__consumer_offsets-{partition}" / f"{entry['base']:020d}.log"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry["buffer"])
            total_bytes += len(entry["buffer"])
        entry["buffer"] = bytearray()
        entry["base"] = entry["next"]

    for n in range(batches):
        group = n % groups
        partition = group % offsets_partitions
        entry = state[partition]
        buffer = entry["buffer"]
        position = len(buffer)
        buffer += templates[group][(n // groups) % VARIANTS_PER_GROUP]
        set_base_offset(buffer, position, entry["next"])
        entry["next"] += PARTITIONS_PER_COMMIT
        if len(buffer) >= SEGMENT_BYTES:
            flush(partition)
    for partition in state:
        flush(partition)
    return batches * PARTITIONS_PER_COMMIT, total_bytes, time.perf_counter() - started


def local_decode_rate(directory: Path) -> tuple[int, float]:
    from groupcoord.pipeline.segment_reader import read_segment
    from groupcoord.pipeline.segments import discover_segments

    segment = discover_segments(str(directory))[0]
    started = time.perf_counter()
    rows = sum(batch.num_rows for batch in read_segment(segment.path, segment.offsets_partition))
    return rows, time.perf_counter() - started


def expected_snapshot(records: int, groups: int) -> dict[tuple[str, str, int], int]:
    """The offsets the generator committed last, per (group, topic, partition)."""
    batches = records // PARTITIONS_PER_COMMIT
    expected = {}
    for g in range(min(groups, batches)):
        last = g + ((batches - 1 - g) // groups) * groups  # the last batch index n with n % groups == g
        variant = (last // groups) % VARIANTS_PER_GROUP
        for p in range(PARTITIONS_PER_COMMIT):
            expected[(f"consumer-group-{g:05d}", f"events.service-{g % 50:02d}.v1", p)] = 1_000_000 + variant * 5_000 + p
    return expected


def snapshot_answers(csv_path: Path) -> dict[tuple[str, str, int], int]:
    import csv

    with csv_path.open(newline="") as handle:
        return {(r["group"], r["topic"], int(r["partition"])): int(r["offset"]) for r in csv.DictReader(handle)}


def _cluster_conf(master: str) -> dict[str, str]:
    if master.startswith("local"):
        return {}
    return {"spark.driver.host": "127.0.0.1", "spark.executor.memory": "1g", "spark.executor.cores": "1"}


def measure(kind: str, directory: str, master: str) -> dict:
    """Runs in a child process: one SparkContext, one measurement."""
    from groupcoord.pipeline.cli import main as cli_main
    from groupcoord.pipeline.session import SessionSettings, read_offsets, start_session

    started = time.perf_counter()
    spark = start_session(SessionSettings(master=master, extra=_cluster_conf(master)))
    session_seconds = time.perf_counter() - started
    df = read_offsets(spark, directory)
    started = time.perf_counter()
    if kind == "count":
        rows = df.count()
    else:  # exactly what `groupcoord pipeline snapshot` does, on the session started above
        out = Path(directory).parent / f"snapshot-out-{master.split(':')[0].strip('[]')}"
        cli_main(["snapshot", "--data-dir", directory, "--out", str(out), "--master", master, "--at", str(T0 + 10**9)])
        rows = len((out / "snapshot.csv").read_text().splitlines()) - 1
    seconds = time.perf_counter() - started
    spark.stop()
    return {"rows": rows, "seconds": seconds, "session_seconds": session_seconds,
            **({"csv": str(out / "snapshot.csv")} if kind == "snapshot" else {})}


def _child(kind: str, directory: Path, master: str, timeout: float) -> dict | None:
    command = [sys.executable, "-m", "bench.pipeline_bench", "--child", kind, "--dir", str(directory), "--master", master]
    env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=Path(__file__).resolve().parent.parent)
    except subprocess.TimeoutExpired:
        print(f"  {kind} with {master}: gave up after {timeout:.0f}s")
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        print(f"  {kind} with {master} failed:\n{done.stderr[-2000:]}")
        return None
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--offsets-partitions", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the log (default: a temp dir, removed)")
    parser.add_argument("--timeout", type=float, default=1500.0, help="seconds allowed per Spark measurement")
    parser.add_argument("--cluster", action="store_true",
                        help="also measure on a standalone cluster on loopback (a master, two 1-core workers)")
    parser.add_argument("--skip-local", action="store_true", help="only the cluster measurements")
    parser.add_argument("--child", choices=["count", "snapshot"], help=argparse.SUPPRESS)
    parser.add_argument("--master", default="local[2]", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, str(args.dir), args.master)))
        return

    workdir = args.dir or Path(tempfile.mkdtemp(prefix="pipeline-bench-"))
    data = workdir / "data"
    try:
        written, size, seconds = generate(data, args.records, args.groups, args.offsets_partitions)
        segments = sum(1 for _ in data.glob("*/*.log"))
        print(f"generated {written:,} records, {size / 2**20:.0f} MiB in {segments} segments "
              f"({args.offsets_partitions} offsets partitions) in {seconds:.1f}s")
        rows, seconds = local_decode_rate(data)
        print(f"decode without Spark (one segment, one core): {rows / seconds:,.0f} records/s")
        expected = expected_snapshot(written, args.groups)
        masters = [] if args.skip_local else [("local[1]", 1), ("local[2]", 2)]
        cluster = None
        if args.cluster:
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
            from tests.pipeline.spark_cluster import StandaloneCluster

            # the cluster's JVMs live in their own sessions: a TERM (e.g. from `timeout`) must still stop them
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
            cluster = StandaloneCluster(workdir / "cluster", workers=2, cores_per_worker=1, memory_per_worker="1536m")
            started = time.perf_counter()
            cluster.start()
            print(f"standalone cluster up in {time.perf_counter() - started:.1f}s: {cluster.master_url}, 2 workers x 1 core")
            masters.append((cluster.master_url, 2))
        try:
            answers = {}
            for master, cores in masters:
                result = _child("count", data, master, args.timeout)
                if result:
                    rate = result["rows"] / result["seconds"]
                    exact = "exact" if result["rows"] == written else f"WRONG (expected {written:,})"
                    print(f"data source count() {master}: {result['rows']:,} rows ({exact}) in {result['seconds']:.1f}s = "
                          f"{rate:,.0f} records/s, {rate / cores:,.0f} per core (session start {result['session_seconds']:.1f}s)")
                if master == "local[1]":
                    continue
                result = _child("snapshot", data, master, args.timeout)
                if result:
                    answers[master] = snapshot_answers(Path(result["csv"]))
                    exact = "exact" if answers[master] == expected else "WRONG"
                    print(f"snapshot job {master}: {result['rows']:,} committed offsets ({exact}) in "
                          f"{result['seconds']:.1f}s wall (+ {result['session_seconds']:.1f}s session start), "
                          f"{written / result['seconds'] / cores:,.0f} records/s per core")
            if len(answers) > 1:
                same = len({tuple(sorted(a.items())) for a in answers.values()}) == 1
                print(f"snapshot answers identical across {', '.join(answers)}: {same}")
        finally:
            if cluster is not None:
                cluster.stop()
    finally:
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
