"""Committed offsets as of a moment: what OffsetFetch would have answered at time T.

Rule: for each (group, topic, partition) take the last offset-commit record applied at or before
T (log order within an offsets partition; transactional commits apply at their COMMIT marker). If
that record is a tombstone the offset was deleted; if it carries an explicit expire timestamp at
or before T the offset had expired (Kafka expires when now >= expireTimestamp). A compacted log
only remembers the last value per key, so a snapshot for a time before the cleaner's work can miss
older values: the answer is exact for any T at or after the newest compacted record.

Output `snapshot.csv` has exactly the columns `groupcoord offsets reset --from-file` applies:
group,topic,partition,offset,leader_epoch,metadata,commit_timestamp (epoch ms).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from groupcoord.pipeline.keys import latest_per_key
from groupcoord.pipeline.output import write_table
from groupcoord.pipeline.schema import RecordKind
from groupcoord.pipeline.transactions import APPLY_COLUMNS, TRANSACTION_MARKERS, applied_records

SNAPSHOT_COLUMNS = ["group", "topic", "partition", "offset", "leader_epoch", "metadata", "commit_timestamp"]
OFFSET_KEY = ["group", "topic", "partition"]
_OFFSET_KINDS = [RecordKind.OFFSET_COMMIT.value, RecordKind.OFFSET_COMMIT_TOMBSTONE.value]
_OFFSET_COLUMNS = [
    *APPLY_COLUMNS, "group", "topic", "partition", "committed_offset", "leader_epoch", "metadata",
    "commit_timestamp", "expire_timestamp",
]


def offset_records(df: DataFrame) -> DataFrame:
    """Offset commits and their tombstones as applied (transactions resolved), offset columns only."""
    wanted = df.select(*_OFFSET_COLUMNS).filter(F.col("kind").isin(_OFFSET_KINDS + TRANSACTION_MARKERS))
    return applied_records(wanted).filter(F.col("kind").isin(_OFFSET_KINDS))


def snapshot(df: DataFrame, at_ms: int) -> DataFrame:
    """Committed offsets per (group, topic, partition) as of `at_ms`, in the snapshot.csv columns."""
    applied = offset_records(df).filter(F.col("applied_timestamp") <= F.lit(at_ms))
    last = latest_per_key(applied, OFFSET_KEY, order_offset="applied_offset", order_timestamp="applied_timestamp")
    live = last.filter(
        (F.col("kind") == RecordKind.OFFSET_COMMIT.value)
        & (F.col("expire_timestamp").isNull() | (F.col("expire_timestamp") > F.lit(at_ms)))
    )
    return live.select(
        "group",
        "topic",
        "partition",
        F.col("committed_offset").alias("offset"),
        "leader_epoch",
        F.coalesce(F.col("metadata"), F.lit("")).alias("metadata"),
        "commit_timestamp",
    )


def run(df: DataFrame, out_dir: Path, at_ms: int) -> list[dict]:
    """Write snapshot.parquet and snapshot.csv; returns the rows."""
    return write_table(snapshot(df, at_ms), out_dir, "snapshot", order_by=OFFSET_KEY)
