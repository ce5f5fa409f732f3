"""A lean local SparkSession with the `consumer_offsets` source registered.

Start-up dominates short jobs, so everything that costs time and is not needed for local analysis
is off: the web UI, the default 200 shuffle partitions (a handful suit one machine), a large
driver heap. Workers must run the same interpreter as the driver (they import this project), so
PYSPARK_PYTHON defaults to it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from groupcoord.pipeline.segments import split_paths

DEFAULT_MASTER = "local[*]"


@dataclass(frozen=True)
class SessionSettings:
    master: str = DEFAULT_MASTER
    app_name: str = "groupcoord-pipeline"
    driver_memory: str = "2g"
    shuffle_partitions: int = 8
    extra: dict[str, str] = field(default_factory=dict)

    def conf(self) -> dict[str, str]:
        settings = {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": self.driver_memory,
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            "spark.sql.adaptive.enabled": "true",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.python.worker.reuse": "true",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
        }
        settings.update(self.extra)
        return settings


def ensure_worker_python() -> None:
    """Spark starts workers with `python3` unless told otherwise; ours has the project installed.

    Local analysis needs no network: binding to loopback also spares Spark its hostname lookup.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def register_source(spark) -> None:
    from groupcoord.pipeline.datasource import ConsumerOffsetsDataSource

    spark.dataSource.register(ConsumerOffsetsDataSource)


def start_session(settings: SessionSettings | None = None):
    """Build (or reuse) the SparkSession and register the data source on it."""
    ensure_worker_python()
    from pyspark.sql import SparkSession

    settings = settings or SessionSettings()
    builder = SparkSession.builder.master(settings.master).appName(settings.app_name)
    for key, value in settings.conf().items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register_source(spark)
    return spark


def read_offsets(spark, paths, *, verify_crc: bool = True):
    """The `consumer_offsets` DataFrame over a data directory or `__consumer_offsets-N` directories."""
    return (
        spark.read.format("consumer_offsets")
        .option("paths", ",".join(split_paths(paths)))
        .option("verify_crc", "true" if verify_crc else "false")
        .load()
    )
