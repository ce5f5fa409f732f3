"""Cluster mode: the jobs on a real Spark standalone cluster (a master and two workers on loopback, each its
own JVM; executors are separate JVMs with their own Python workers) give exactly the answers of local mode,
over a log the daemon wrote, read from a shared path and (the snapshot) from S3 (moto's server on 127.0.0.1,
`s3a://`). The executors' Python has no groupcoord installed: the jobs ship it with `--py-files`, as the
README's cluster recipe does (tests/pipeline/shipped_package.py).

One driver process runs every cluster job (a driver's JVM start is the slow part); local mode runs in this
process on the suite's session. The CSV files are compared byte for byte.
"""

from __future__ import annotations

import sys

import pytest

from groupcoord.pipeline.cli import main as pipeline_main
from tests.pipeline.cli_runs import run_cli
from tests.pipeline.daemon_log import offsets_dirs, write_log
from tests.pipeline.shipped_package import build_wheel_archive, python_without_groupcoord
from tests.pipeline.spark_cluster import ClusterUnavailable, StandaloneCluster

pytestmark = pytest.mark.timeout(900)
AT = "2100-01-01T00:00:00Z"
JOBS = {"snapshot": ["--at", AT], "history": [], "rebalances": []}
TABLES = {"snapshot": ["snapshot"], "history": ["history"], "rebalances": ["rebalances", "generations", "rebalances_hourly"]}
BUCKET = "offsets-archive"


@pytest.fixture(scope="module")
def daemon_log(tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster-log")
    groups = write_log(root / "daemon-data")
    return offsets_dirs(root / "daemon-data", root / "shared"), groups


@pytest.fixture(scope="module")
def s3_server():
    """moto's S3 in server mode on loopback: executors reach it over HTTP like any object store."""
    from moto.server import ThreadedMotoServer

    from tests.pipeline.spark_cluster import _free_port

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def _upload(endpoint: str, shared) -> str:
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test",
                      region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    for path in sorted(shared.rglob("*")):
        if path.is_file():
            s3.upload_file(str(path), BUCKET, f"prod/{path.relative_to(shared)}")
    return f"s3a://{BUCKET}/prod"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    try:
        started = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster")).start()
    except ClusterUnavailable as exc:
        pytest.fail(f"the standalone cluster did not start: {exc}")
    try:
        yield started
    finally:
        started.stop()


def _tables(out, job):
    return {name: (out / f"{name}.csv").read_text() for name in TABLES[job]}


@pytest.mark.full("every job on a standalone Spark cluster (master and worker JVMs), local mode beside it (~60-230 s, the default run's longest)")
def test_the_jobs_on_a_standalone_cluster_answer_exactly_as_local_mode(spark, daemon_log, cluster, s3_server, tmp_path):
    shared, groups = daemon_log
    local, remote, from_s3 = tmp_path / "local", tmp_path / "cluster", tmp_path / "cluster-s3"
    for job, options in JOBS.items():
        assert pipeline_main([job, "--data-dir", str(shared), "--out", str(local / job), "--master", "local[2]",
                              *options]) == 0

    s3_path = _upload(s3_server, shared)
    wheel = build_wheel_archive(tmp_path)
    cluster_flags = ["--master", cluster.master_url, "--driver-memory", "1g", "--py-files", str(wheel),
                     "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=512m",
                     "--conf", "spark.cores.max=2", "--conf", "spark.executor.cores=1",
                     "--conf", "spark.sql.shuffle.partitions=2",  # a handful of rows: 2 shuffle tasks, not 8
                     "--conf", f"spark.hadoop.fs.s3a.endpoint={s3_server}",
                     "--conf", "spark.hadoop.fs.s3a.access.key=test", "--conf", "spark.hadoop.fs.s3a.secret.key=test"]
    runs = [["pipeline", job, "--data-dir", str(shared), "--out", str(remote / job), *options, *cluster_flags]
            for job, options in JOBS.items()]
    # from object storage: the snapshot (the reader is the same for every job; the jobs differ above)
    runs.append(["pipeline", "snapshot", "--data-dir", s3_path, "--out", str(from_s3 / "snapshot"),
                 *JOBS["snapshot"], *cluster_flags])
    result = run_cli(runs, worker_python=str(python_without_groupcoord(tmp_path, sys.executable)))
    assert result.returncode == 0, result.stderr[-4000:]

    for job in JOBS:
        expected = _tables(local / job, job)
        assert _tables(remote / job, job) == expected, job
    assert _tables(from_s3 / "snapshot", "snapshot") == _tables(local / "snapshot", "snapshot")
    # the answers are about the daemon's groups: two consumers, a leave, the survivor's final commits
    snapshot = (local / "snapshot" / "snapshot.csv").read_text()
    for g, group in enumerate(groups):
        assert f"{group},cl-topic-{g}" in snapshot
        assert f",0,{11 + g}," in snapshot and f",1,{13 + g}," in snapshot
    # the work ran on the cluster's executors, not in the driver: both workers started executors
    executors = [p for p in cluster.work_dir.glob("worker-*/app-*/*") if p.is_dir()]
    assert {p.parts[-3] for p in executors} == {"worker-0", "worker-1"}, executors


def test_an_s3_prefix_without_segments_is_a_clear_error(s3_server, tmp_path, capsys):
    import boto3

    boto3.client("s3", endpoint_url=s3_server, aws_access_key_id="test", aws_secret_access_key="test",
                 region_name="us-east-1").create_bucket(Bucket="empty-bucket")
    from groupcoord.pipeline.object_store import S3Settings
    from groupcoord.pipeline.segments import NoSegmentsError, discover_segments

    with pytest.raises(NoSegmentsError, match="holds no __consumer_offsets-N"):
        discover_segments("s3a://empty-bucket/nothing", S3Settings(endpoint=s3_server, access_key="test",
                                                                    secret_key="test"))
