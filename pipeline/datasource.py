"""The `consumer_offsets` PySpark data source (Spark 4's Python Data Source API).

    spark.read.format("consumer_offsets").load("/var/lib/kafka/data")
    spark.read.format("consumer_offsets").load(["a/__consumer_offsets-3", "b/__consumer_offsets-7"])
    spark.read.format("consumer_offsets").option("paths", "a/__consumer_offsets-3,b/__consumer_offsets-7").load()

One input partition per segment file keeps tasks independent (a segment is a self-contained run of
batches) and lets Spark spread a big partition's history over every core. Options:

* `path` / `paths`: a data directory, `__consumer_offsets-N` directories or `.log` files, comma-separated;
* `verify_crc` (default `true`): check every batch's CRC-32C; damage is reported as rows either way;
* `batch_rows` (default 16384): rows per Arrow batch handed to Spark;
* `s3.endpoint`, `s3.access_key`, `s3.secret_key`, `s3.region`: for `s3a://` / `s3://` paths
  (`pipeline/object_store.py`; `read_offsets` fills them from the session's `spark.hadoop.fs.s3a.*`).

Everything a partition needs travels inside it (path, partition, store settings), so executors on other
hosts read their segment from the shared path or the object store with no set-up of their own.
"""

from __future__ import annotations

import json
from typing import Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from groupcoord.pipeline.object_store import S3Settings
from groupcoord.pipeline.schema import spark_schema
from groupcoord.pipeline.segments import discover_segments, split_paths

SOURCE_NAME = "consumer_offsets"
_TRUE = {"true", "1", "yes", "on"}


def _paths_option(value: str | None) -> list[str]:
    """`paths` as we set it (comma-separated) or as Spark sets it for `.load([a, b])` (a JSON array)."""
    if value and value.lstrip().startswith("["):
        return split_paths(json.loads(value))
    return split_paths(value)


class SegmentPartition(InputPartition):
    """One segment file; pickled to the worker, so it carries plain values only."""

    def __init__(self, path: str, offsets_partition: int) -> None:
        super().__init__(path)
        self.path = path
        self.offsets_partition = offsets_partition


class ConsumerOffsetsReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        paths = _paths_option(options.get("paths")) + split_paths(options.get("path"))
        if not paths:
            raise ValueError("consumer_offsets needs a path: .load(DIR) or .option('paths', 'DIR1,DIR2')")
        self.s3 = S3Settings.resolve(options)
        self.segments = discover_segments(paths, self.s3)
        self.verify = str(options.get("verify_crc", "true")).lower() in _TRUE
        self.batch_rows = int(options.get("batch_rows", "16384"))

    def partitions(self) -> list[SegmentPartition]:
        return [SegmentPartition(segment.path, segment.offsets_partition) for segment in self.segments]

    def read(self, partition: SegmentPartition) -> Iterator:
        from groupcoord.pipeline.segment_reader import read_segment

        if not isinstance(partition, SegmentPartition):
            return  # no segments: Spark still calls read() once, with its own default partition; nothing to yield
        yield from read_segment(
            partition.path, partition.offsets_partition, verify=self.verify, batch_rows=self.batch_rows, s3=self.s3
        )


class ConsumerOffsetsDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self):
        return spark_schema()

    def reader(self, schema) -> ConsumerOffsetsReader:
        return ConsumerOffsetsReader(dict(self.options))
