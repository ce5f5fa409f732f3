"""What identifies a record for compaction, and the latest record per key: the replay rule.

The coordinator (and Kafka's log cleaner) keep only the last record per key; a tombstone deletes
the key. Within one offsets partition the log order decides which record is last. A key normally
lives in exactly one offsets partition (the group's hash), but directories gathered from
different brokers or a changed partition count can put it in several; then the newer timestamp wins.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from groupcoord.pipeline.schema import DAMAGE_KINDS, RecordKind

_NOT_KEYED = [kind.value for kind in (*DAMAGE_KINDS, RecordKind.TXN_COMMIT, RecordKind.TXN_ABORT, RecordKind.CONTROL,
                                      RecordKind.UNKNOWN, RecordKind.MALFORMED)]


def record_type_column() -> Column:
    """The kind without its tombstone suffix: a value and its tombstone share a key."""
    return F.regexp_replace(F.col("kind"), "_tombstone$", "")


def compaction_key_column() -> Column:
    """One string per compaction key: record type plus the key's fields."""
    return F.concat_ws(
        "\u0000",
        record_type_column(),
        F.coalesce(F.col("group"), F.lit("")),
        F.coalesce(F.col("topic"), F.lit("")),
        F.coalesce(F.col("partition").cast("string"), F.lit("")),
        F.coalesce(F.col("member_id"), F.lit("")),
    )


def keyed_records(df: DataFrame) -> DataFrame:
    """Only rows that are key/value records (no damage, markers, unknown or malformed rows)."""
    return df.filter(~F.col("kind").isin(_NOT_KEYED))


def latest_per_key(df: DataFrame, key_columns: list[str], *, order_offset: str = "log_offset",
                   order_timestamp: str = "timestamp") -> DataFrame:
    """The last row per key: last in log order within an offsets partition, newest across partitions.

    Rows that share `order_offset` (transactional commits applied at one marker) are ordered by their own
    `log_offset`, as the coordinator applies them in log order.

    Two phases, because picking a whole row is costly in Spark: `max_by` over a struct of strings cannot use
    a hash aggregate, so it sorts every row. First a hash aggregate finds each key's newest `order_offset` per
    offsets partition (a long: cheap, and the result is one row per key), and only the rows at that offset
    (a broadcast join when the keys are few) go through the row-picking `max_by`.
    """
    scope = [*key_columns, "offsets_partition"]
    newest = df.groupBy(*scope).agg(F.max(order_offset).alias("_newest"))
    candidates = df.join(newest, scope).filter(F.col(order_offset) == F.col("_newest")).drop("_newest")
    payload = F.struct(*[F.col(name) for name in df.columns])
    in_log_order = F.struct(F.col(order_offset), F.col("log_offset")) if order_offset != "log_offset" \
        else F.col(order_offset)
    per_partition = candidates.groupBy(*scope).agg(F.max_by(payload, in_log_order).alias("_row"))
    per_key = per_partition.groupBy(*key_columns).agg(
        F.max_by(F.col("_row"), F.struct(F.col(f"_row.{order_timestamp}"), F.col("offsets_partition"))).alias("_row")
    )
    return per_key.select("_row.*")
