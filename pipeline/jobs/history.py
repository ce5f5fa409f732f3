"""Commit history per group and partition, with a Burrow-style status.

For each (group, topic, partition), over the commits applied at or before the reference time
(`--at`, default: the newest record in the log):

* `commits`, `first_commit`, `last_commit` (epoch ms), `mean_interval_ms` (commit cadence);
* `progress_per_sec`: committed-offset growth per second between the first and last commit;
* `rewinds`: commits whose offset is lower than the previous commit's (a reset or a replay);
* `last_commit_age_ms`: reference time minus the last commit;
* `deleted`: the key's last record is a tombstone (offset deleted, expired or group deleted).

The status is judged, as Burrow does, over a sliding window of the last `window` commits (default
10). Burrow also looks at consumer lag, which the offsets log does not hold (it knows committed
offsets, not the topics' end offsets), so these rules use commits alone. First match wins:

1. STOP  - the partition was deleted, or the last commit is older than both the window's span
           (time between its first and last commit) and `min_idle_ms` (default 5 minutes):
           the consumer has stopped committing.
2. STALL - at least two commits in the window and all of them commit the same offset: the
           consumer is alive but not progressing (an idle topic looks the same without lag data).
3. WARN  - the committed offset went backwards inside the window (rewind).
4. OK    - otherwise.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from groupcoord.pipeline.jobs.snapshot import OFFSET_KEY, offset_records
from groupcoord.pipeline.output import write_table
from groupcoord.pipeline.schema import RecordKind
from groupcoord.protocol.frozen import frozen_dataclass


class Status(str, Enum):
    OK = "OK"
    WARN = "WARN"
    STALL = "STALL"
    STOP = "STOP"


@frozen_dataclass(slots=False)
class HistoryRules:
    window: int = 10
    min_idle_ms: int = 5 * 60 * 1000


HISTORY_COLUMNS = [
    "group", "topic", "partition", "commits", "first_commit", "last_commit", "last_offset", "mean_interval_ms",
    "progress_per_sec", "rewinds", "last_commit_age_ms", "deleted", "window_commits", "window_span_ms",
    "window_rewinds", "status",
]


def reference_time(df: DataFrame) -> int:
    """The newest record timestamp: 'now' for a log read after the fact."""
    newest = df.agg(F.max("timestamp")).first()[0]
    return int(newest) if newest is not None else 0


def history(df: DataFrame, at_ms: int | None = None, rules: HistoryRules = HistoryRules()) -> DataFrame:
    """One row per (group, topic, partition) with cadence, progress, rewinds and status."""
    reference = reference_time(df) if at_ms is None else at_ms
    applied = offset_records(df).filter(F.col("applied_timestamp") <= F.lit(reference))
    in_order = Window.partitionBy(*OFFSET_KEY).orderBy("applied_timestamp", "applied_offset")
    newest_first = Window.partitionBy(*OFFSET_KEY).orderBy(F.desc("applied_timestamp"), F.desc("applied_offset"))
    is_commit = F.col("kind") == RecordKind.OFFSET_COMMIT.value
    commits = (
        applied.filter(is_commit)
        .withColumn("_previous", F.lag("committed_offset").over(in_order))
        .withColumn("_rewind", (F.col("_previous").isNotNull() & (F.col("committed_offset") < F.col("_previous"))).cast("int"))
        .withColumn("_recency", F.row_number().over(newest_first))
    )
    in_window = F.col("_recency") <= rules.window
    per_key = commits.groupBy(*OFFSET_KEY).agg(
        F.count(F.lit(1)).alias("commits"),
        F.min("applied_timestamp").alias("first_commit"),
        F.max("applied_timestamp").alias("last_commit"),
        F.min_by("committed_offset", F.struct("applied_timestamp", "applied_offset")).alias("_first_offset"),
        F.max_by("committed_offset", F.struct("applied_timestamp", "applied_offset")).alias("last_offset"),
        F.sum("_rewind").alias("rewinds"),
        F.sum(in_window.cast("int")).alias("window_commits"),
        F.min(F.when(in_window, F.col("applied_timestamp"))).alias("_window_start"),
        F.min(F.when(in_window, F.col("committed_offset"))).alias("_window_min"),
        F.max(F.when(in_window, F.col("committed_offset"))).alias("_window_max"),
        # the oldest commit in the window has no predecessor inside it: its rewind flag does not count
        F.sum(F.when(in_window & (F.col("_recency") < rules.window), F.col("_rewind")).otherwise(0)).alias("window_rewinds"),
    )
    last_record = applied.withColumn("_recency", F.row_number().over(newest_first)).filter(F.col("_recency") == 1)
    deleted = last_record.select(*OFFSET_KEY, (F.col("kind") == RecordKind.OFFSET_COMMIT_TOMBSTONE.value).alias("deleted"))
    span = F.col("last_commit") - F.col("first_commit")
    window_span = F.col("last_commit") - F.col("_window_start")
    age = F.lit(reference) - F.col("last_commit")
    status = (
        F.when(F.col("deleted") | ((age > window_span) & (age > F.lit(rules.min_idle_ms))), Status.STOP.value)
        .when((F.col("window_commits") >= 2) & (F.col("_window_min") == F.col("_window_max")) & (F.col("window_rewinds") == 0),
              Status.STALL.value)
        .when(F.col("window_rewinds") > 0, Status.WARN.value)
        .otherwise(Status.OK.value)
    )
    return (
        per_key.join(deleted, OFFSET_KEY, "left")
        .withColumn("deleted", F.coalesce(F.col("deleted"), F.lit(False)))
        .withColumn("mean_interval_ms", F.when(F.col("commits") > 1, span / (F.col("commits") - 1)))
        .withColumn("progress_per_sec",
                    F.when(span > 0, (F.col("last_offset") - F.col("_first_offset")) * 1000.0 / span))
        .withColumn("last_commit_age_ms", age)
        .withColumn("window_span_ms", window_span)
        .withColumn("status", status)
        .select(*HISTORY_COLUMNS)
    )


def run(df: DataFrame, out_dir: Path, at_ms: int | None = None, rules: HistoryRules = HistoryRules()) -> list[dict]:
    return write_table(history(df, at_ms, rules), out_dir, "history", order_by=OFFSET_KEY)
