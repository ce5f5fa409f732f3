"""The small decisions live and cluster mode make before Spark starts."""

import pytest

from groupcoord.pipeline.kafka_source import CONNECTOR, choose_connector_version, source_options
from groupcoord.pipeline.object_store import S3Settings, is_object_store, object_key
from groupcoord.pipeline.session import SessionSettings, parse_conf

PUBLISHED = ["3.5.1", "4.0.0", "4.1.3", "4.2.0", "4.2.0-preview5", "5.0.0"]


def test_the_connector_matches_spark_when_published():
    assert choose_connector_version("4.1.3", PUBLISHED) == ("4.1.3", None)


def test_an_unpublished_spark_uses_the_newest_release_of_its_major_and_says_so():
    version, note = choose_connector_version("4.3.0", PUBLISHED)
    assert version == "4.2.0" and f"{CONNECTOR}:4.3.0" in note and "--kafka-package" in note


def test_the_offsets_topic_is_read_committed_from_the_beginning():
    options = source_options("h:9092")
    assert options["subscribe"] == "__consumer_offsets" and options["kafka.isolation.level"] == "read_committed"
    assert options["startingOffsets"] == "earliest" and options["failOnDataLoss"] == "false"


def test_conf_flags_pass_through_and_cluster_masters_keep_their_driver_address():
    extra = parse_conf(["spark.executor.memory=2g", "spark.hadoop.fs.s3a.endpoint=http://h:9000/x=y"])
    assert extra == {"spark.executor.memory": "2g", "spark.hadoop.fs.s3a.endpoint": "http://h:9000/x=y"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_conf(["spark.executor.memory"])
    assert SessionSettings(master="local[2]").conf()["spark.driver.host"] == "127.0.0.1"
    cluster = SessionSettings(master="spark://m:7077", extra=extra).conf()
    assert "spark.driver.host" not in cluster and cluster["spark.executor.memory"] == "2g"


def test_s3_settings_come_from_options_then_spark_conf_then_the_environment(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://env:1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    settings = S3Settings.resolve({"s3.endpoint": "http://opt:2"}, {"spark.hadoop.fs.s3a.access.key": "conf-key"})
    assert (settings.endpoint, settings.access_key) == ("http://opt:2", "conf-key")
    assert S3Settings.resolve().endpoint == "http://env:1"
    assert is_object_store("s3a://b/p") and is_object_store("s3://b/p") and not is_object_store("/data")
    assert object_key("s3a://bucket/a/b/") == "bucket/a/b"
