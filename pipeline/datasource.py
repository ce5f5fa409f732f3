"""The `consumer_offsets` PySpark data source (Spark 4's Python Data Source API).

    spark.read.format("consumer_offsets").load("/var/lib/kafka/data")
    spark.read.format("consumer_offsets").load(["a/__consumer_offsets-3", "b/__consumer_offsets-7"])
    spark.read.format("consumer_offsets").option("paths", "a/__consumer_offsets-3,b/__consumer_offsets-7").load()

Each input partition is a group of whole segment files (a segment is a self-contained run of batches, so
tasks stay independent): big segments get a task each and spread a big partition's history over every core,
small and empty ones are packed together (`pipeline.segments.pack_segments`) so a broker's 50 mostly empty
offsets partitions are a handful of tasks, not 50 in every stage. Options:

* `path` / `paths`: a data directory, `__consumer_offsets-N` directories or `.log` files, comma-separated;
* `verify_crc` (default `true`): check every batch's CRC-32C; damage is reported as rows either way;
* `batch_rows` (default 16384): rows per Arrow batch handed to Spark;
* `parallelism` (default 8; `read_offsets` passes the session's default parallelism): how many cores the
  segments are packed for;
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
from groupcoord.pipeline.segments import SegmentFile, discover_segments, pack_segments, split_paths

SOURCE_NAME = "consumer_offsets"
_TRUE = {"true", "1", "yes", "on"}


def _paths_option(value: str | None) -> list[str]:
    """`paths` as we set it (comma-separated) or as Spark sets it for `.load([a, b])` (a JSON array)."""
    if value and value.lstrip().startswith("["):
        return split_paths(json.loads(value))
    return split_paths(value)


class SegmentPartition(InputPartition):
    """Whole segment files, read one after the other; pickled to the worker, so it carries plain values only:
    (path, offsets partition) pairs."""

    def __init__(self, segments: list[SegmentFile]) -> None:
        super().__init__(segments[0].path)
        self.segments = [(segment.path, segment.offsets_partition) for segment in segments]


class ConsumerOffsetsReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        paths = _paths_option(options.get("paths")) + split_paths(options.get("path"))
        if not paths:
            raise ValueError("consumer_offsets needs a path: .load(DIR) or .option('paths', 'DIR1,DIR2')")
        self.s3 = S3Settings.resolve(options)
        self.segments = discover_segments(paths, self.s3)
        self.verify = str(options.get("verify_crc", "true")).lower() in _TRUE
        self.batch_rows = int(options.get("batch_rows", "16384"))
        self.parallelism = max(1, int(options.get("parallelism", "8")))

    def partitions(self) -> list[SegmentPartition]:
        return [SegmentPartition(group) for group in pack_segments(self.segments, self.parallelism)]

    def read(self, partition: SegmentPartition) -> Iterator:
        from groupcoord.pipeline.segment_reader import read_segment

        if not isinstance(partition, SegmentPartition):
            return  # no segments: Spark still calls read() once, with its own default partition; nothing to yield
        for path, offsets_partition in partition.segments:
            yield from read_segment(path, offsets_partition, verify=self.verify, batch_rows=self.batch_rows, s3=self.s3)


class ConsumerOffsetsDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self):
        return spark_schema()

    def reader(self, schema) -> ConsumerOffsetsReader:
        return ConsumerOffsetsReader(dict(self.options))
