"""Writing job results: Parquet for further analysis, CSV for people and for other tools.

Results are per-key or per-group tables, small next to the log, so the CSV is written from the
driver as one file with a stable column order and row order (diffable between runs); Parquet is
written by Spark.
"""

from __future__ import annotations

import csv
from pathlib import Path

from pyspark.sql import DataFrame


def write_parquet(df: DataFrame, out_dir: Path, name: str) -> Path:
    target = Path(out_dir) / f"{name}.parquet"
    df.write.mode("overwrite").parquet(str(target))
    return target


def write_csv(rows: list[dict], columns: list[str], out_dir: Path, name: str) -> Path:
    target = Path(out_dir) / f"{name}.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row[column] is None else row[column] for column in columns])
    return target


def write_table(df: DataFrame, out_dir: Path, name: str, order_by: list[str]) -> list[dict]:
    """Parquet and CSV of one result table; returns its rows (ordered) for printing and plotting."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    ordered = df.orderBy(*order_by)
    write_parquet(ordered, out_dir, name)
    rows = [row.asDict(recursive=True) for row in ordered.collect()]
    write_csv(rows, df.columns, out_dir, name)
    return rows
