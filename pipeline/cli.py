"""`groupcoord pipeline <job>` and `python -m pipeline <job>`.

Every job reads the `__consumer_offsets` log under `--data-dir` with the `consumer_offsets` data
source, prints the integrity summary (damage is reported, never fatal), runs, and writes its
tables to `--out`. Spark is imported only when a job runs, so adding the sub-command to the main
CLI costs nothing.
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
}


def _instant(text: str) -> int:
    try:
        return parse_instant(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", required=True, action="append",
                        help="broker data dir or __consumer_offsets-N dir(s); repeat or comma-separate")
    parser.add_argument("--out", required=True, type=Path, help="directory for the job's output files")
    parser.add_argument("--master", default="local[*]", help="Spark master (default: local[*])")
    parser.add_argument("--driver-memory", default="2g", help="Spark driver memory (default: 2g)")
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
    if name in ("health", "report"):
        parser.add_argument("--replay-rate", type=float, default=None,
                            help="records/s a coordinator replays at start-up (default: the benchmarked rate)")


def _add_jobs(parser: argparse.ArgumentParser) -> None:
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    for name, help_text in JOB_HELP.items():
        job = jobs.add_parser(name, help=help_text, description=help_text)
        _add_common(job)
        _add_job_options(name, job)
        job.set_defaults(func=run_job)


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
    """Run one job; returns a one-line description of what was written."""
    from groupcoord.pipeline.jobs import health, history, rebalances, report, snapshot

    out = args.out
    if job == "snapshot":
        rows = snapshot.run(df, out, args.at)
        return f"snapshot at {format_instant(args.at)}: {len(rows)} committed offsets -> {out / 'snapshot.csv'}"
    if job == "history":
        rows = history.run(df, out, args.at, _history_rules(args))
        by_status: dict[str, int] = {}
        for row in rows:
            by_status[row["status"]] = by_status.get(row["status"], 0) + 1
        return f"history: {len(rows)} group partitions {by_status} -> {out / 'history.csv'}"
    if job == "rebalances":
        tables = rebalances.run(df, out, _storm_rules(args))
        storms = [row["group"] for row in tables["rebalances"] if row["storm"]]
        return (f"rebalances: {len(tables['generations'])} generations in {len(tables['rebalances'])} groups,"
                f" storms in {storms or 'none'} -> {out / 'rebalances.csv'}")
    if job == "health":
        rows = health.run(df, out, segment_bytes, _health_settings(args))
        skew = rows[0]["skew"] if rows else None
        return f"health: {len(rows)} offsets partitions, skew {skew} -> {out / 'health.csv'}"
    path = report.run(df, out, args.at, segment_bytes, health_settings=_health_settings(args),
                      history_rules=_history_rules(args), storm=_storm_rules(args))
    return f"report -> {path}"


def run_job(args: argparse.Namespace) -> int:
    from pyspark import StorageLevel

    from groupcoord.pipeline.integrity import summarize
    from groupcoord.pipeline.segments import NoSegmentsError, discover_segments
    from groupcoord.pipeline.session import SessionSettings, read_offsets, start_session
    from groupcoord.pipeline.progress import SparkProgress

    started = time.monotonic()
    try:
        segments = discover_segments(args.data_dir)
    except NoSegmentsError as exc:
        print(f"{args.job}: {exc}", file=sys.stderr)
        return 2
    segment_bytes: dict[int, int] = {}
    for segment in segments:
        segment_bytes[segment.offsets_partition] = segment_bytes.get(segment.offsets_partition, 0) + segment.size_bytes
    print(f"{args.job}: {len(segments)} segments in {len(segment_bytes)} offsets partitions, "
          f"{sum(segment_bytes.values())} bytes", file=sys.stderr)
    spark = start_session(SessionSettings(master=args.master, driver_memory=args.driver_memory))
    df = read_offsets(spark, args.data_dir, verify_crc=not args.no_verify_crc).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with SparkProgress(spark, args.job):
            for line in summarize(df).lines():
                print(line, file=sys.stderr)
            print(_dispatch(args.job, df, args, segment_bytes))
    finally:
        df.unpersist()
    print(f"{args.job}: done in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return 0


def build_parser(prog: str = "python -m pipeline") -> argparse.ArgumentParser:
    """A stand-alone parser whose sub-commands are the jobs (`python -m pipeline snapshot ...`)."""
    root = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_jobs(root)
    return root


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
