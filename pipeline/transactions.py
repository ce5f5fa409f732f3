"""When transactional offset commits take effect.

A TxnOffsetCommit is written in a transactional batch and only counts once the transaction's COMMIT
marker follows in the same offsets partition; an ABORT marker, or no marker yet, means it never
took effect. So a transactional commit is applied at its marker: the marker's log offset and
timestamp become the commit's `applied_offset` / `applied_timestamp`. Everything else is applied
where it is written.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from groupcoord.pipeline.schema import RecordKind

TRANSACTION_MARKERS = [RecordKind.TXN_COMMIT.value, RecordKind.TXN_ABORT.value]
# The columns `applied_records` needs; callers keep these when they project early.
APPLY_COLUMNS = ["offsets_partition", "log_offset", "timestamp", "kind", "producer_id", "is_transactional"]


def applied_records(df: DataFrame) -> DataFrame:
    """`df` (all rows, markers included) with `applied_offset` / `applied_timestamp`, aborted and pending transactional rows removed."""
    in_transaction = F.coalesce(F.col("is_transactional"), F.lit(False))
    plain = df.filter(~in_transaction).withColumn("applied_offset", F.col("log_offset")).withColumn(
        "applied_timestamp", F.col("timestamp")
    )
    transactional = df.filter(in_transaction & ~F.col("kind").isin(TRANSACTION_MARKERS))
    markers = df.filter(F.col("kind").isin(TRANSACTION_MARKERS)).select(
        F.col("offsets_partition").alias("_m_partition"),
        F.col("producer_id").alias("_m_producer"),
        F.col("log_offset").alias("_m_offset"),
        F.col("timestamp").alias("_m_timestamp"),
        F.col("kind").alias("_m_kind"),
    )
    matched = transactional.join(
        markers,
        (transactional.offsets_partition == markers._m_partition)
        & (transactional.producer_id == markers._m_producer)
        & (markers._m_offset > transactional.log_offset),
        "inner",
    )
    first_marker = Window.partitionBy("offsets_partition", "log_offset").orderBy("_m_offset")
    committed = (
        matched.withColumn("_rank", F.row_number().over(first_marker))
        .filter((F.col("_rank") == 1) & (F.col("_m_kind") == RecordKind.TXN_COMMIT.value))
        .withColumn("applied_offset", F.col("_m_offset"))
        .withColumn("applied_timestamp", F.col("_m_timestamp"))
        .select(*plain.columns)
    )
    return plain.unionByName(committed)
