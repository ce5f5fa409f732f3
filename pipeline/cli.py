"""`groupcoord pipeline <job>` and `python -m pipeline <job>`.

Every job reads the `__consumer_offsets` log under `--data-dir` (a local or shared path, or
`s3a://bucket/prefix`) with the `consumer_offsets` data source, or the offsets topic itself over the Kafka
protocol with `--bootstrap-server` (snapshot, history, rebalances; `watch` keeps doing so), prints the
integrity summary (damage is reported, never fatal), runs, and writes its tables to `--out`.
`--master` picks local mode or a cluster, `--conf KEY=VALUE` passes any Spark setting through.

Spark is imported only when a job runs, and only after the set-up checks (`pipeline/preflight.py`), so a
missing PySpark or Java is one line with its fix and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from groupcoord.pipeline.timeparse import format_instant, parse_instant

JOB_HELP = {
    "snapshot": "committed offsets as of --at (snapshot.csv for `groupcoord offsets reset --from-file`)",
    "history": "commit cadence, progress, rewinds and Burrow-style status per group partition",
    "rebalances": "generations per group, rebalance rate, storms, static members, leader churn",
    "health": "records, bytes, hash skew, live-key ratio and replay estimate per offsets partition",
    "report": "one self-contained HTML report with plots",
    "watch": "live lag, commit rate and Burrow-style status per group, read from a broker over the Kafka protocol",
}
# Jobs that can read the offsets topic over the protocol instead of segment files (health measures files).
LIVE_CAPABLE = {"snapshot", "history", "rebalances"}


def _instant(text: str) -> int:
    try:
        return parse_instant(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _add_common(name: str, parser: argparse.ArgumentParser) -> None:
    if name != "watch":
        parser.add_argument("--data-dir", action="append", required=name not in LIVE_CAPABLE,
                            help="broker data dir, __consumer_offsets-N dir(s) or s3a://bucket/prefix; "
                                 "repeat or comma-separate")
    if name in LIVE_CAPABLE or name == "watch":
        parser.add_argument("--bootstrap-server", required=name == "watch", metavar="HOST:PORT",
                            help="read __consumer_offsets from this broker over the Kafka protocol (no disk access)")
        parser.add_argument("--kafka-package", default=None, metavar="GROUP:ARTIFACT:VERSION",
                            help="Spark's Kafka source to load (default: spark-sql-kafka-0-10 for the installed Spark)")
    parser.add_argument("--out", required=name != "watch", type=Path, help="directory for the job's output files")
    parser.add_argument("--master", default="local[*]",
                        help="Spark master: local[N], spark://HOST:PORT, yarn, k8s://… (default: local[*])")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="any Spark setting, as spark-submit's --conf (repeatable)")
    parser.add_argument("--driver-memory", default="2g", help="Spark driver memory (default: 2g)")
    parser.add_argument("--py-files", action="append", default=[], metavar="FILE",
                        help="ship to the executors' Python path, e.g. groupcoord's wheel for workers that do not "
                             "have it installed (.whl, .zip, .egg, .py; repeat or comma-separate)")
    if name != "watch":
        parser.add_argument("--no-verify-crc", action="store_true", help="skip CRC-32C checks while reading")


def _add_job_options(name: str, parser: argparse.ArgumentParser) -> None:
    from_help = "ISO-8601 (UTC if no zone) or epoch ms"
    if name == "snapshot":
        parser.add_argument("--at", required=True, type=_instant, help=f"the moment to snapshot: {from_help}")
    if name in ("history", "report"):
        parser.add_argument("--at", type=_instant, default=None,
                            help=f"reference time ({from_help}); default: the newest record in the log")
    if name in ("history", "report"):
        parser.add_argument("--window", type=int, default=10, help="commits in the status window (default 10)")
        parser.add_argument("--min-idle-ms", type=int, default=300_000,
                            help="never STOP a partition idle for less than this (default 300000)")
    if name in ("rebalances", "report"):
        parser.add_argument("--storm-window-ms", type=int, default=600_000, help="storm window (default 600000)")
        parser.add_argument("--storm-threshold", type=int, default=5,
                            help="generations within the storm window that make a storm (default 5)")
    if name == "watch":
        parser.add_argument("--once", action="store_true",
                            help="read what the topic holds now, publish once and stop (Trigger.AvailableNow)")
        parser.add_argument("--interval", type=float, default=10.0, help="seconds between micro-batches (default 10)")
        parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
        parser.add_argument("--window", type=int, default=10, help="commits in the Burrow window (default 10)")
        parser.add_argument("--quiet", action="store_true", help="no console table (only the --out sink)")
    if name in ("health", "report"):
        parser.add_argument("--replay-rate", type=float, default=None,
                            help="records/s a coordinator replays at start-up (default: the benchmarked rate)")


def _add_jobs(parser: argparse.ArgumentParser) -> None:
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    for name, help_text in JOB_HELP.items():
        job = jobs.add_parser(name, help=help_text, description=help_text)
        _add_common(name, job)
        _add_job_options(name, job)
        job.set_defaults(func=run_watch if name == "watch" else run_job)


def add_pipeline_command(subparsers) -> argparse.ArgumentParser:
    """Add `pipeline` with one sub-command per job to an argparse sub-parsers object."""
    parser = subparsers.add_parser("pipeline", help="analyse a __consumer_offsets log with PySpark",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_jobs(parser)
    return parser


def _history_rules(args: argparse.Namespace):
    from groupcoord.pipeline.jobs.history import HistoryRules

    return HistoryRules(window=args.window, min_idle_ms=args.min_idle_ms)


def _storm_rules(args: argparse.Namespace):
    from groupcoord.pipeline.jobs.rebalances import StormRules

    return StormRules(window_ms=args.storm_window_ms, threshold=args.storm_threshold)


def _health_settings(args: argparse.Namespace):
    from groupcoord.pipeline.jobs.health import HealthSettings

    return HealthSettings(replay_records_per_sec=args.replay_rate) if args.replay_rate else HealthSettings()


def _dispatch(job: str, df, args: argparse.Namespace, segment_bytes: dict[int, int]) -> str:
    """Run one job; returns a one-line description of what was written. Only the job's own module is
    imported: the report's plots pull in matplotlib, which no other job needs."""
    out = args.out
    if job == "snapshot":
        from groupcoord.pipeline.jobs import snapshot

        rows = snapshot.run(df, out, args.at)
        return f"snapshot at {format_instant(args.at)}: {len(rows)} committed offsets -> {out / 'snapshot.csv'}"
    if job == "history":
        from groupcoord.pipeline.jobs import history

        rows = history.run(df, out, args.at, _history_rules(args))
        by_status: dict[str, int] = {}
        for row in rows:
            by_status[row["status"]] = by_status.get(row["status"], 0) + 1
        return f"history: {len(rows)} group partitions {by_status} -> {out / 'history.csv'}"
    if job == "rebalances":
        from groupcoord.pipeline.jobs import rebalances

        tables = rebalances.run(df, out, _storm_rules(args))
        storms = [row["group"] for row in tables["rebalances"] if row["storm"]]
        return (f"rebalances: {len(tables['generations'])} generations in {len(tables['rebalances'])} groups,"
                f" storms in {storms or 'none'} -> {out / 'rebalances.csv'}")
    if job == "health":
        from groupcoord.pipeline.jobs import health

        rows = health.run(df, out, segment_bytes, _health_settings(args))
        skew = rows[0]["skew"] if rows else None
        return f"health: {len(rows)} offsets partitions, skew {skew} -> {out / 'health.csv'}"
    from groupcoord.pipeline.jobs import report

    path = report.run(df, out, args.at, segment_bytes, health_settings=_health_settings(args),
                      history_rules=_history_rules(args), storm=_storm_rules(args))
    return f"report -> {path}"


def _session_settings(args: argparse.Namespace, *, live: bool):
    """Session settings from the flags; the Kafka source's package is added for protocol reads."""
    from groupcoord.pipeline.session import SessionSettings, parse_conf

    extra = parse_conf(args.conf)
    if live:
        from groupcoord.pipeline.kafka_source import kafka_package

        package = kafka_package(args.kafka_package)
        wanted = [p for p in extra.get("spark.jars.packages", "").split(",") if p]
        extra["spark.jars.packages"] = ",".join(wanted + [package])
    from groupcoord.pipeline.segments import split_paths

    py_files = tuple(split_paths(args.py_files))
    for path in py_files:
        if not Path(path).expanduser().is_file():
            raise ValueError(f"--py-files: {path} is not a file")
    return SessionSettings(master=args.master, driver_memory=args.driver_memory, extra=extra,
                           py_files=py_files)


def _start(args: argparse.Namespace, *, live: bool):
    """Set-up checks, then the session; every way of failing here is one line and exit code 2."""
    from groupcoord.pipeline import preflight

    try:
        preflight.check_all()
        settings = _session_settings(args, live=live)
    except (preflight.SetupError, ValueError) as exc:
        raise preflight.SetupError(str(exc)) from None
    from groupcoord.pipeline.session import start_session

    try:
        return start_session(settings)
    except Exception as exc:  # the JVM did not come up, Ivy could not resolve a package, the master is away
        raise preflight.spark_start_failure(exc) from None


def _segments(args: argparse.Namespace) -> tuple[list, dict[int, int]]:
    from groupcoord.pipeline.segments import discover_segments

    segments = discover_segments(args.data_dir)
    segment_bytes: dict[int, int] = {}
    for segment in segments:
        segment_bytes[segment.offsets_partition] = segment_bytes.get(segment.offsets_partition, 0) + segment.size_bytes
    print(f"{args.job}: {len(segments)} segments in {len(segment_bytes)} offsets partitions, "
          f"{sum(segment_bytes.values())} bytes", file=sys.stderr)
    return segments, segment_bytes


def run_job(args: argparse.Namespace) -> int:
    from groupcoord.pipeline.preflight import SetupError, report
    from groupcoord.pipeline.segments import NoSegmentsError

    started = time.monotonic()
    live = bool(getattr(args, "bootstrap_server", None))
    if live == bool(args.data_dir):
        print(f"{args.job}: give either --data-dir or --bootstrap-server", file=sys.stderr)
        return 2
    segment_bytes: dict[int, int] = {}
    try:
        if not live and not any(_is_remote(p) for p in args.data_dir):
            _, segment_bytes = _segments(args)  # a wrong path is reported before Spark starts
        spark = _start(args, live=live)
    except NoSegmentsError as exc:
        print(f"{args.job}: {exc}", file=sys.stderr)
        return 2
    except SetupError as exc:
        return report(exc, f"{args.job}")
    from pyspark import StorageLevel

    from groupcoord.pipeline.integrity import summarize
    from groupcoord.pipeline.progress import SparkProgress
    from groupcoord.pipeline.session import read_offsets

    if live:
        from groupcoord.pipeline.kafka_source import read_offsets_topic

        df = read_offsets_topic(spark, args.bootstrap_server)
        print(f"{args.job}: __consumer_offsets read over the Kafka protocol from {args.bootstrap_server}",
              file=sys.stderr)
    else:
        try:
            df = read_offsets(spark, args.data_dir, verify_crc=not args.no_verify_crc)
        except Exception as exc:  # e.g. an s3a:// prefix without segments: Spark wraps the reader's error
            print(f"{args.job}: {_first_line(exc)}", file=sys.stderr)
            return 2
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with SparkProgress(spark, args.job):
            for line in summarize(df).lines():
                print(line, file=sys.stderr)
            print(_dispatch(args.job, df, args, segment_bytes))
    finally:
        df.unpersist()
    print(f"{args.job}: done in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return 0


def run_watch(args: argparse.Namespace) -> int:
    from groupcoord.pipeline.preflight import SetupError, report

    try:
        spark = _start(args, live=True)
    except SetupError as exc:
        return report(exc, "watch")
    from groupcoord.pipeline.jobs.watch import WatchSettings, run

    settings = WatchSettings(bootstrap=args.bootstrap_server, out_dir=args.out, window=args.window,
                             console=not args.quiet)
    watch = run(spark, settings, once=args.once, interval_s=args.interval, duration_s=args.duration)
    print(f"watch: {watch.batches} micro-batches, {len(watch.tracks)} group partitions"
          + (f" -> {args.out / 'watch_groups.csv'}" if args.out else ""), file=sys.stderr)
    return 0


def _is_remote(path: str) -> bool:
    from groupcoord.pipeline.object_store import is_object_store

    return any(is_object_store(p) for p in path.split(","))


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    for marker in ("NoSegmentsError: ", "FileNotFoundError: ", "OSError: "):
        if marker in text:
            return text.split(marker, 1)[1].splitlines()[0]
    return (text.strip().splitlines() or [type(exc).__name__])[0]


def build_parser(prog: str = "python -m pipeline") -> argparse.ArgumentParser:
    """A stand-alone parser whose sub-commands are the jobs (`python -m pipeline snapshot ...`)."""
    root = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_jobs(root)
    return root


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
