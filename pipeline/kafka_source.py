"""`__consumer_offsets` read over the Kafka protocol through Spark's own Kafka source, decoded with our codecs.

Without the broker's disk (Burrow's and kminion's premise) the offsets topic is still there to consume: any
Kafka-compatible broker serves it to a consumer that names it. Spark's Kafka source
(`spark-sql-kafka-0-10`, fetched from Maven Central by `spark.jars.packages` into the Ivy cache) does the
consuming; this module turns its rows (key, value, partition, offset, timestamp) into rows of the
`consumer_offsets` schema with the same decoder the segment reader uses, so every job runs unchanged on
either input.

Transactions are resolved by the broker: the source reads with `isolation.level=read_committed`, so
offsets of aborted transactions never arrive and those of open transactions wait behind the last stable
offset; control records are never handed to a consumer. Every row is therefore applied where it stands
(`is_transactional` false), exactly what the segment reader's marker matching computes from the disk.
"""

from __future__ import annotations

import functools
import re
import sys
import urllib.request
from pathlib import Path
from typing import Iterator

from groupcoord.protocol.names import OFFSETS_TOPIC

SCALA_BINARY = "2.13"
CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}"
MAVEN_METADATA = (f"https://repo1.maven.org/maven2/org/apache/spark/spark-sql-kafka-0-10_{SCALA_BINARY}/"
                  "maven-metadata.xml")
LIVE_SEGMENT = "kafka"  # the `segment` column of rows read over the protocol
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def _release(version: str) -> tuple[int, int, int] | None:
    match = _RELEASE.match(version)
    return tuple(int(part) for part in match.groups()) if match else None  # type: ignore[return-value]


def _ivy_has(version: str) -> bool:
    jar = f"org.apache.spark_spark-sql-kafka-0-10_{SCALA_BINARY}-{version}.jar"
    return any((home / "jars" / jar).exists() for home in Path.home().glob(".ivy2*"))


@functools.lru_cache(maxsize=1)  # one look-up per process: a driver that runs several jobs asks once
def _published_versions(timeout_s: float = 10.0) -> list[str]:
    try:
        with urllib.request.urlopen(MAVEN_METADATA, timeout=timeout_s) as response:
            text = response.read().decode("utf-8", "replace")
    except OSError:
        return []
    return re.findall(r"<version>([^<]+)</version>", text)


def choose_connector_version(spark_version: str, published: list[str] | None = None) -> tuple[str, str | None]:
    """The connector release for this Spark: its own version when Maven Central has it (or the Ivy cache
    does), else the newest published release of the same major version not newer than it (the source's
    API is stable within a major). Returns (version, note for the user or None)."""
    if _ivy_has(spark_version):
        return spark_version, None
    published = _published_versions() if published is None else published
    if not published or spark_version in published:
        return spark_version, None
    mine = _release(spark_version)
    candidates = sorted(
        (rel, v) for v in published if (rel := _release(v)) and mine and rel[0] == mine[0] and rel <= mine
    )
    if not candidates:
        return spark_version, None
    chosen = candidates[-1][1]
    return chosen, (f"Maven Central has no {CONNECTOR}:{spark_version}; using {chosen}, the newest "
                    f"Spark {mine[0]}.x connector published (--kafka-package overrides)")


def kafka_package(override: str | None = None) -> str:
    """The `spark.jars.packages` coordinate for the installed PySpark."""
    if override:
        return override
    import pyspark

    version, note = choose_connector_version(pyspark.__version__)
    if note:
        print(f"note: {note}", file=sys.stderr)
    return f"{CONNECTOR}:{version}"


def source_options(bootstrap: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Options of Spark's Kafka source for reading the offsets topic from the beginning."""
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": OFFSETS_TOPIC,
        "startingOffsets": "earliest",
        "kafka.isolation.level": "read_committed",
        # Internal topics are left out of pattern subscriptions unless the consumer asks for them; naming
        # the topic works either way, and the setting keeps a `subscribePattern` override working too.
        "kafka.exclude.internal.topics": "false",
        "failOnDataLoss": "false",  # compaction removes offsets between reads: expected, not data loss
        "includeHeaders": "false",
    }
    options.update(extra or {})
    return options


def decode_kafka_rows(batches: Iterator) -> Iterator:
    """mapInArrow body: Kafka source rows (key, value, partition, offset, timestamp_ms) -> schema rows."""
    import pyarrow as pa

    from groupcoord.pipeline.record_rows import RowDecoder
    from groupcoord.pipeline.schema import ARROW_SCHEMA

    decoders: dict[int, RowDecoder] = {}
    for batch in batches:
        columns = batch.to_pydict()
        rows = []
        for key, value, partition, offset, timestamp in zip(
            columns["key"], columns["value"], columns["partition"], columns["offset"], columns["timestamp_ms"]
        ):
            decoder = decoders.get(partition)
            if decoder is None:
                decoder = decoders[partition] = RowDecoder(partition, LIVE_SEGMENT)
            kind, decoded = decoder._record_row(_KafkaRecord(key, value))  # the segment reader's own decoding
            size = (len(key) if key else 0) + (len(value) if value else 0)
            rows.append((partition, LIVE_SEGMENT, None, offset, timestamp, timestamp, kind, None, False, size)
                        + decoded)
        if rows:
            arrays = [pa.array(column, type=field.type) for column, field in zip(zip(*rows), ARROW_SCHEMA)]
            yield pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


class _KafkaRecord:
    """The two fields of a record the decoder reads."""

    __slots__ = ("key", "value")

    def __init__(self, key: bytes | None, value: bytes | None) -> None:
        self.key, self.value = key, value


def decoded(raw):
    """Kafka source DataFrame (batch or streaming) -> the `consumer_offsets` schema."""
    from pyspark.sql import functions as F

    from groupcoord.pipeline.schema import spark_schema

    narrow = raw.select("key", "value", "partition", "offset", F.expr("unix_millis(timestamp)").alias("timestamp_ms"))
    return narrow.mapInArrow(decode_kafka_rows, spark_schema())


def use_consumer_offset_fetching(spark) -> None:
    """Spark's default (admin-client) offset fetching plans no ranges for the internal offsets topic — on
    Kafka 4.3.1 as on groupcoord, the query reads nothing — while its consumer-based fetching, still a
    supported setting, reads it like any topic. This is a session setting of Spark SQL."""
    spark.conf.set("spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "true")


def read_offsets_topic(spark, bootstrap: str, extra: dict[str, str] | None = None):
    """The whole offsets topic as it stands now (log start to last stable offset), as a batch DataFrame:
    only the partitions that hold records, each over its exact range (`pipeline/offsets_topic.py`)."""
    import json

    from groupcoord.pipeline.offsets_topic import readable_ranges
    from groupcoord.pipeline.schema import spark_schema

    use_consumer_offset_fetching(spark)
    ranges = readable_ranges(bootstrap)
    if not ranges:
        return spark.createDataFrame([], spark_schema())
    options = source_options(bootstrap, extra)
    del options["subscribe"]
    options.update({
        "assign": json.dumps({OFFSETS_TOPIC: sorted(ranges)}),
        "startingOffsets": json.dumps({OFFSETS_TOPIC: {str(p): r[0] for p, r in ranges.items()}}),
        "endingOffsets": json.dumps({OFFSETS_TOPIC: {str(p): r[1] for p, r in ranges.items()}}),
    })
    return decoded(spark.read.format("kafka").options(**options).load())


def stream_offsets_topic(spark, bootstrap: str, extra: dict[str, str] | None = None):
    """The offsets topic from the beginning and then as it grows, as a streaming DataFrame."""
    use_consumer_offset_fetching(spark)
    return decoded(spark.readStream.format("kafka").options(**source_options(bootstrap, extra)).load())
