"""A lean SparkSession, local or on a cluster, with the `consumer_offsets` source registered.

Start-up dominates short jobs, so everything that costs time and is not needed for local analysis
is off: the web UI, the default 200 shuffle partitions (a handful suit one machine), a large
driver heap. Workers must run the same interpreter as the driver (they import this project), so
PYSPARK_PYTHON defaults to it.

With `--master spark://…` (or yarn, k8s://…) the executors are other processes, usually on other hosts:
the driver then binds where Spark's defaults say (SPARK_LOCAL_IP / spark.driver.host, as the cluster
needs), and `--conf KEY=VALUE` reaches the session unchanged, so every setting a cluster needs
(`spark.executor.memory`, `spark.hadoop.fs.s3a.*`, `spark.jars.packages`) is a command-line flag away.
Executors that do not have groupcoord installed get it shipped: `py_files` (the CLI's `--py-files`) are added
with `SparkContext.addPyFile`, which copies them to every executor and puts them on its Python path — a
wheel too (Spark only puts `.zip`/`.egg` files on the path, so a `.whl`, itself a zip archive, is shipped
under a `.zip` name). `spark.submit.pyFiles` set with `--conf` is not enough: outside spark-submit nothing
distributes it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import field

from groupcoord.pipeline.segments import split_paths
from groupcoord.protocol.frozen import frozen_dataclass

DEFAULT_MASTER = "local[*]"


@frozen_dataclass(slots=False)
class SessionSettings:
    master: str = DEFAULT_MASTER
    app_name: str = "groupcoord-pipeline"
    driver_memory: str = "2g"
    shuffle_partitions: int = 8
    extra: dict[str, str] = field(default_factory=dict)
    py_files: tuple[str, ...] = ()

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
        }
        if is_local_master(self.master):
            settings.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
        settings.update(self.extra)
        return settings


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def parse_conf(pairs: list[str] | None) -> dict[str, str]:
    """`--conf KEY=VALUE` flags (spark-submit's spelling) as a dict; later flags win."""
    conf: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--conf takes KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf


def ensure_worker_python(master: str = DEFAULT_MASTER) -> None:
    """Spark starts workers with `python3` unless told otherwise; ours has the project installed.

    Local analysis needs no network: binding to loopback also spares Spark its hostname lookup.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local_master(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def register_source(spark) -> None:
    from groupcoord.pipeline.datasource import ConsumerOffsetsDataSource

    spark.dataSource.register(ConsumerOffsetsDataSource)


def start_session(settings: SessionSettings | None = None):
    """Build (or reuse) the SparkSession and register the data source on it."""
    settings = settings or SessionSettings()
    ensure_worker_python(settings.master)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(settings.master).appName(settings.app_name)
    for key, value in settings.conf().items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    ship_py_files(spark, settings.py_files)
    register_source(spark)
    return spark


def ship_py_files(spark, paths) -> None:
    """Each file to every executor's Python path (once per session; a `.whl` under a `.zip` name)."""
    import shutil
    import tempfile
    from pathlib import Path

    context = spark.sparkContext
    shipped = getattr(context, "_groupcoord_py_files", set())
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"--py-files: {raw} is not a file")
        if str(path) in shipped:
            continue
        target = path
        if path.suffix == ".whl":
            target = Path(tempfile.mkdtemp(prefix="groupcoord-pyfiles-")) / (path.stem + ".zip")
            shutil.copyfile(path, target)
        context.addPyFile(str(target))
        shipped.add(str(path))
    context._groupcoord_py_files = shipped


def read_offsets(spark, paths, *, verify_crc: bool = True):
    """The `consumer_offsets` DataFrame over a data directory, `__consumer_offsets-N` directories or an
    object-store prefix (`s3a://bucket/prefix`; the store's settings come from `spark.hadoop.fs.s3a.*`)."""
    from groupcoord.pipeline.object_store import S3Settings

    s3 = S3Settings.resolve(spark_conf=dict(spark.sparkContext.getConf().getAll()))
    return (
        spark.read.format("consumer_offsets")
        .option("paths", ",".join(split_paths(paths)))
        .option("verify_crc", "true" if verify_crc else "false")
        .option("parallelism", str(spark.sparkContext.defaultParallelism))
        .options(**s3.as_options())
        .load()
    )
