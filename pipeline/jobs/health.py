"""Health of the offsets log itself, per `__consumer_offsets` partition.

* `records`, `record_bytes` (keys + values) and `segment_bytes` (the files on disk, when known):
  the load each partition carries; `record_share` and the overall `skew` (busiest partition over
  the mean) show whether the group-id hash spreads groups evenly;
* `live_keys` (keys whose last applied record is not a tombstone; aborted and still-open
  transactional commits never apply) and `live_ratio` = live keys / records:
  near 1 means compaction keeps up; a low ratio means start-up replays mostly dead records;
* `tombstones`, `groups`, and the damage counts (`corrupt`, `torn_tail`, `malformed`, `unknown`);
* `estimated_replay_sec`: records / `replay_records_per_sec`, what loading the partition costs a
  coordinator at start-up. The default rate is the single-core decode rate measured by
  bench/pipeline_bench.py on the reference machine; pass the rate measured on yours.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from groupcoord.pipeline.keys import compaction_key_column, keyed_records, latest_per_key
from groupcoord.pipeline.output import write_table
from groupcoord.pipeline.schema import RecordKind
from groupcoord.pipeline.transactions import APPLY_COLUMNS, applied_records
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass(slots=False)
class HealthSettings:
    replay_records_per_sec: float = 40_000.0


_DAMAGE_COLUMNS = {
    "corrupt": RecordKind.CORRUPT.value,
    "torn_tail": RecordKind.TORN_TAIL.value,
    "malformed": RecordKind.MALFORMED.value,
    "unknown": RecordKind.UNKNOWN.value,
}


def health(df: DataFrame, segment_bytes: dict[int, int] | None = None,
           settings: HealthSettings = HealthSettings()) -> DataFrame:
    """One row per offsets partition; `segment_bytes` maps partition -> bytes on disk (optional)."""
    is_damage = F.col("kind").isin(RecordKind.CORRUPT.value, RecordKind.TORN_TAIL.value)
    totals = df.groupBy("offsets_partition").agg(
        F.sum(F.when(~is_damage, 1).otherwise(0)).alias("records"),
        F.sum(F.when(~is_damage, F.col("record_bytes")).otherwise(0)).alias("record_bytes"),
        F.sum(F.col("kind").endswith("_tombstone").cast("int")).alias("tombstones"),
        F.countDistinct("group").alias("groups"),
        *[F.sum((F.col("kind") == kind).cast("int")).alias(name) for name, kind in _DAMAGE_COLUMNS.items()],
    )
    key_fields = df.select(*APPLY_COLUMNS, "group", "topic", "partition", "member_id")
    applied = keyed_records(applied_records(key_fields)).withColumn("_key", compaction_key_column())
    last = latest_per_key(applied, ["_key"], order_offset="applied_offset", order_timestamp="applied_timestamp")
    live = last.filter(~F.col("kind").endswith("_tombstone")).groupBy("offsets_partition").agg(
        F.count(F.lit(1)).alias("live_keys")
    )
    sizes = df.sparkSession.createDataFrame(
        [(int(p), int(b)) for p, b in (segment_bytes or {}).items()],
        "offsets_partition int, segment_bytes long",
    )
    # A partition whose segments hold no records still counts: it is where the hash sent nothing.
    result = totals.join(live, "offsets_partition", "left").join(sizes, "offsets_partition", "full").fillna(
        0, subset=["records", "record_bytes", "tombstones", "groups", "live_keys", *_DAMAGE_COLUMNS]
    )
    total_records = F.sum("records").over(_everything())
    mean_records = F.avg("records").over(_everything())
    return (
        result.withColumn("live_ratio", F.when(F.col("records") > 0, F.col("live_keys") / F.col("records")))
        .withColumn("record_share", F.when(total_records > 0, F.col("records") / total_records))
        .withColumn("skew", F.when(mean_records > 0, F.max("records").over(_everything()) / mean_records))
        .withColumn("estimated_replay_sec", F.col("records") / F.lit(settings.replay_records_per_sec))
        .select(
            "offsets_partition", "records", "record_bytes", "segment_bytes", "record_share", "skew", "live_keys",
            "live_ratio", "tombstones", "groups", *_DAMAGE_COLUMNS, "estimated_replay_sec",
        )
    )


def _everything():
    """The whole (small, one row per partition) table as one window, for shares and skew."""
    return Window.partitionBy()


def run(df: DataFrame, out_dir: Path, segment_bytes: dict[int, int] | None = None,
        settings: HealthSettings = HealthSettings()) -> list[dict]:
    return write_table(health(df, segment_bytes, settings), out_dir, "health", order_by=["offsets_partition"])
