"""Reading one segment file into Arrow record batches: the work of one Spark input partition.

This runs inside the Python worker. It yields Arrow batches rather than Python rows because
Spark then moves whole columns across the worker boundary instead of pickling every row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pyarrow as pa

from groupcoord.pipeline.object_store import S3Settings, is_object_store, read_object
from groupcoord.pipeline.record_rows import RowDecoder
from groupcoord.pipeline.segment_columns import SegmentColumnsDecoder, rows_to_batch
from groupcoord.pipeline.segment_scan import Damage, scan_batches

DEFAULT_BATCH_ROWS = 16_384


def _load(path: str | Path, s3: S3Settings | None) -> tuple[bytes, str]:
    if is_object_store(str(path)):
        return read_object(str(path), s3 or S3Settings.resolve()), str(path).rpartition("/")[2]
    return Path(path).read_bytes(), Path(path).name


def read_segment(
    path: str | Path,
    offsets_partition: int,
    *,
    verify: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    s3: S3Settings | None = None,
) -> Iterator[pa.RecordBatch]:
    """Every record of the segment as rows, damage included as `corrupt` / `torn_tail` rows, decoded into
    Arrow columns by `pipeline.segment_columns` (offset commits without a Python object per record)."""
    buf, name = _load(path, s3)
    yield from SegmentColumnsDecoder(offsets_partition, name).batches(buf, verify=verify, batch_rows=batch_rows)


def read_segment_rows(
    path: str | Path,
    offsets_partition: int,
    *,
    verify: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    s3: S3Settings | None = None,
) -> Iterator[pa.RecordBatch]:
    """The same batches through the row-at-a-time reference reader (`RowDecoder`): what `read_segment` is
    checked against, and the baseline of `bench/pipeline_bench.py`'s decode figure."""
    buf, name = _load(path, s3)
    decoder = RowDecoder(offsets_partition, name)
    pending: list[tuple] = []
    for item in scan_batches(buf, verify=verify):
        if isinstance(item, Damage):
            pending.append(decoder.damage_row(item))
        else:
            pending.extend(decoder.batch_rows(item))
        if len(pending) >= batch_rows:
            yield rows_to_batch(pending)
            pending = []
    if pending:
        yield rows_to_batch(pending)
