"""Reading one segment file into Arrow record batches: the work of one Spark input partition.

This runs inside the Python worker. It yields Arrow batches rather than Python rows because
Spark then moves whole columns across the worker boundary instead of pickling every row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa

from groupcoord.pipeline.object_store import S3Settings, is_object_store, read_object
from groupcoord.pipeline.record_rows import RowDecoder
from groupcoord.pipeline.schema import ARROW_SCHEMA
from groupcoord.pipeline.segment_scan import Damage, scan_batches

DEFAULT_BATCH_ROWS = 16_384


def _to_record_batch(rows: list[list[Any]]) -> pa.RecordBatch:
    columns = zip(*rows)
    arrays = [pa.array(column, type=field.type) for column, field in zip(columns, ARROW_SCHEMA)]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


def read_segment(
    path: str | Path,
    offsets_partition: int,
    *,
    verify: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    s3: S3Settings | None = None,
) -> Iterator[pa.RecordBatch]:
    """Every record of the segment as rows, damage included as `corrupt` / `torn_tail` rows."""
    if is_object_store(str(path)):
        buf = read_object(str(path), s3 or S3Settings.resolve())
        name = str(path).rpartition("/")[2]
    else:
        buf = Path(path).read_bytes()
        name = Path(path).name
    decoder = RowDecoder(offsets_partition, name)
    pending: list[list[Any]] = []
    for item in scan_batches(buf, verify=verify):
        if isinstance(item, Damage):
            pending.append(decoder.damage_row(item))
        else:
            pending.extend(decoder.batch_rows(item))
        if len(pending) >= batch_rows:
            yield _to_record_batch(pending)
            pending = []
    if pending:
        yield _to_record_batch(pending)
