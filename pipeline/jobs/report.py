"""One self-contained HTML report over an offsets log: integrity, health, commit history, rebalances.

It reuses the other jobs' functions on the same (cached) DataFrame, so the report and the CSVs of
`health`, `history` and `rebalances` always agree.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from groupcoord.pipeline import plots
from groupcoord.pipeline.integrity import IntegritySummary, summarize
from groupcoord.pipeline.jobs.health import HealthSettings, health
from groupcoord.pipeline.jobs.history import HistoryRules, Status, history, reference_time
from groupcoord.pipeline.jobs.rebalances import StormRules, generations, rebalance_summary
from groupcoord.pipeline.jobs.snapshot import snapshot
from groupcoord.pipeline.report_html import Section, render
from groupcoord.pipeline.schema import RecordKind
from groupcoord.pipeline.timeparse import format_instant

REPORT_FILE = "report.html"
TOP_GROUPS = 8
TIME_BUCKETS = 60


def _rows(df: DataFrame, *order: str) -> list[dict]:
    return [row.asDict(recursive=True) for row in df.orderBy(*order).collect()]


def commit_series(df: DataFrame, top: int = TOP_GROUPS, buckets: int = TIME_BUCKETS) -> dict[str, list[tuple[int, int]]]:
    """Offset-commit records per time bucket for the `top` groups with the most commits."""
    commits = df.filter(F.col("kind") == RecordKind.OFFSET_COMMIT.value)
    bounds = commits.agg(F.min("timestamp"), F.max("timestamp")).first()
    if bounds[0] is None:
        return {}
    width = max((bounds[1] - bounds[0]) // buckets, 1)
    busiest = [r["group"] for r in commits.groupBy("group").count().orderBy(F.desc("count"), "group").limit(top).collect()]
    bucket = (F.floor((F.col("timestamp") - F.lit(bounds[0])) / F.lit(width)) * F.lit(width) + F.lit(bounds[0])).cast("long")
    counted = commits.filter(F.col("group").isin(busiest)).groupBy("group", bucket.alias("bucket")).count()
    series: dict[str, list[tuple[int, int]]] = {group: [] for group in busiest}
    for row in counted.orderBy("group", "bucket").collect():
        series[row["group"]].append((row["bucket"], row["count"]))
    return series


def _integrity_section(summary: IntegritySummary) -> Section:
    section = Section("Integrity")
    for line in summary.lines(limit=20):
        section.paragraph(line, "" if summary.clean else "bad")
    return section


def build_report(df: DataFrame, at_ms: int | None = None, segment_bytes: dict[int, int] | None = None,
                 health_settings: HealthSettings = HealthSettings(), history_rules: HistoryRules = HistoryRules(),
                 storm: StormRules = StormRules()) -> str:
    """The report's HTML text."""
    reference = reference_time(df) if at_ms is None else at_ms
    summary = summarize(df)
    health_rows = _rows(health(df, segment_bytes, health_settings), "offsets_partition")
    history_rows = _rows(history(df, reference, history_rules), "group", "topic", "partition")
    gens = generations(df)
    generation_rows = _rows(gens, "group", "generation")
    rebalance_rows = _rows(rebalance_summary(gens, storm), "group")
    snapshot_rows = _rows(snapshot(df, reference), "group", "topic", "partition")
    status_counts = {status.value: sum(1 for r in history_rows if r["status"] == status.value) for status in Status}

    overview = Section("Overview").paragraph(
        f"Reference time {format_instant(reference)} ({reference} ms). {summary.records} rows in "
        f"{len(health_rows)} offsets partitions; {len(snapshot_rows)} committed offsets live; "
        f"{len(rebalance_rows)} classic groups with rebalances."
    )
    sections = [overview, _integrity_section(summary)]
    health_section = Section("Offsets log health").paragraph(
        "Records and live keys per partition (skew = busiest partition / mean; live ratio = live keys / records)."
    )
    if health_rows:
        health_section.image(plots.partition_load(health_rows), "records per partition")
    health_section.table(health_rows, list(health_rows[0]) if health_rows else [])
    sections.append(health_section)

    history_section = Section("Commit history").image(plots.status_counts(status_counts), "status counts")
    history_section.image(plots.commits_over_time(commit_series(df)), "commits over time")
    not_ok = [r for r in history_rows if r["status"] != Status.OK.value]
    history_section.paragraph(f"{len(not_ok)} of {len(history_rows)} group partitions are not OK.")
    history_section.table(not_ok, ["group", "topic", "partition", "status", "commits", "last_offset",
                                   "last_commit_age_ms", "rewinds", "progress_per_sec"])
    sections.append(history_section)

    rebalance_section = Section("Rebalances")
    if generation_rows:
        rebalance_section.image(plots.rebalance_timeline(generation_rows), "rebalance timeline")
    rebalance_section.table(rebalance_rows, ["group", "rebalances", "missing_generations", "rebalances_per_hour",
                                             "max_in_storm_window", "storm", "mean_members", "mean_static_share",
                                             "leader_changes"])
    sections.append(rebalance_section)
    sections.append(
        Section("Committed offsets at the reference time").table(
            snapshot_rows, ["group", "topic", "partition", "offset", "leader_epoch", "metadata", "commit_timestamp"], 100
        )
    )
    return render("__consumer_offsets report", sections)


def run(df: DataFrame, out_dir: Path, at_ms: int | None = None, segment_bytes: dict[int, int] | None = None,
        **settings) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / REPORT_FILE
    target.write_text(build_report(df, at_ms, segment_bytes, **settings), encoding="utf-8")
    return target
