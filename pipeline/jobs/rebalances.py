"""Rebalances per group, from the group metadata the coordinator writes at each generation.

A classic group's GroupMetadata record is written when a rebalance completes (a new generation,
with its members and leader) and when the group's state changes otherwise (e.g. it becomes Empty,
which also starts a new generation). So each distinct generation seen is one rebalance.

Tables written:

* `generations`: one row per (group, generation): first and last time seen, member count, static
  members (with a group.instance.id) and their share, leader, protocol, whether the leader changed
  from the previous generation seen;
* `rebalances`: one row per group: `rebalances` (distinct generations seen), `missing_generations`
  (gaps in the numbering: rebalances whose records the cleaner already removed, or a log that starts
  late), `rebalances_per_hour` over the span from the first to the last generation (at least one
  hour), `max_in_storm_window` (most generations started within any `storm_window_ms`, default
  10 minutes) and `storm` (that count reaching `storm_threshold`, default 5), mean members and mean
  static-member share per generation, and `leader_changes`;
* `rebalances_hourly`: generations started per group and clock hour (UTC).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from groupcoord.pipeline.output import write_table
from groupcoord.pipeline.schema import RecordKind
from groupcoord.protocol.frozen import frozen_dataclass

HOUR_MS = 3_600_000


@frozen_dataclass(slots=False)
class StormRules:
    window_ms: int = 10 * 60 * 1000
    threshold: int = 5


def generations(df: DataFrame) -> DataFrame:
    """One row per (group, generation) seen in classic group metadata records."""
    records = df.filter(F.col("kind") == RecordKind.GROUP_METADATA.value)
    last_of_generation = F.struct("timestamp", "offsets_partition", "log_offset")
    per_generation = records.groupBy("group", "generation").agg(
        F.min("timestamp").alias("first_seen"),
        F.max("timestamp").alias("last_seen"),
        F.count(F.lit(1)).alias("records"),
        F.max_by(
            F.struct("member_count", "leader", "protocol_name", "protocol_type", "members"), last_of_generation
        ).alias("_last"),
    )
    in_order = Window.partitionBy("group").orderBy("generation")
    static = F.size(F.filter(F.col("_last.members"), lambda m: m["instance_id"].isNotNull()))
    previous_leader = F.lag("leader").over(in_order)
    return (
        per_generation.withColumn("member_count", F.col("_last.member_count"))
        .withColumn("static_members", F.coalesce(static, F.lit(0)))
        .withColumn("static_share", F.when(F.col("member_count") > 0, F.col("static_members") / F.col("member_count")))
        .withColumn("leader", F.col("_last.leader"))
        .withColumn("protocol_type", F.col("_last.protocol_type"))
        .withColumn("protocol_name", F.col("_last.protocol_name"))
        .withColumn(
            "leader_changed",
            previous_leader.isNotNull() & F.col("leader").isNotNull() & (F.col("leader") != previous_leader),
        )
        .drop("_last")
    )


def rebalance_summary(gens: DataFrame, storm: StormRules = StormRules()) -> DataFrame:
    """Per-group rebalance counts, rate, storms, membership and leader churn."""
    storm_window = Window.partitionBy("group").orderBy("first_seen").rangeBetween(-(storm.window_ms - 1), 0)
    with_bursts = gens.withColumn("_in_window", F.count(F.lit(1)).over(storm_window))
    span_hours = F.greatest((F.max("first_seen") - F.min("first_seen")) / F.lit(HOUR_MS), F.lit(1.0))
    return (
        with_bursts.groupBy("group")
        .agg(
            F.count(F.lit(1)).alias("rebalances"),
            (F.max("generation") - F.min("generation") + 1 - F.count(F.lit(1))).alias("missing_generations"),
            F.min("generation").alias("first_generation"),
            F.max("generation").alias("last_generation"),
            F.min("first_seen").alias("first_rebalance"),
            F.max("first_seen").alias("last_rebalance"),
            (F.count(F.lit(1)) / span_hours).alias("rebalances_per_hour"),
            F.max("_in_window").alias("max_in_storm_window"),
            F.avg("member_count").alias("mean_members"),
            F.avg("static_share").alias("mean_static_share"),
            F.sum(F.col("leader_changed").cast("int")).alias("leader_changes"),
        )
        .withColumn("storm", F.col("max_in_storm_window") >= F.lit(storm.threshold))
    )


def hourly(gens: DataFrame) -> DataFrame:
    hour = (F.floor(F.col("first_seen") / F.lit(HOUR_MS)) * F.lit(HOUR_MS)).cast("long")
    return gens.groupBy("group", hour.alias("hour_start")).agg(F.count(F.lit(1)).alias("rebalances"))


def run(df: DataFrame, out_dir: Path, storm: StormRules = StormRules()) -> dict[str, list[dict]]:
    gens = generations(df).cache()
    try:
        written_generations = write_table(gens, out_dir, "generations", order_by=["group", "generation"])
        summary = write_table(rebalance_summary(gens, storm), out_dir, "rebalances", order_by=["group"])
        per_hour = write_table(hourly(gens), out_dir, "rebalances_hourly", order_by=["group", "hour_start"])
    finally:
        gens.unpersist()
    return {"generations": written_generations, "rebalances": summary, "hourly": per_hour}
