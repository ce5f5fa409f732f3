"""Offline maintenance: `groupcoord log compact` shrinks a stopped broker's __consumer_offsets to the
latest record per key without changing what a restarted broker answers; it refuses a live directory."""

import json
import subprocess
import sys

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.coordinator.broker import run_in_thread


def _groupcoord(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", *args], capture_output=True, text=True, timeout=120)


def _commit_many_times(bootstrap: str, group: str, rounds: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("orders", 2, 1)])["orders"].result(timeout=30)
    for offset in range(1, rounds + 1):
        partitions = [TopicPartition("orders", p, offset * 10 + p) for p in range(2)]
        admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, partitions)])[group].result(timeout=30)


def _committed(bootstrap: str, group: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = ConsumerGroupTopicPartitions(group, [TopicPartition("orders", 0), TopicPartition("orders", 1)])
    result = admin.list_consumer_group_offsets([request])[group].result(timeout=30)
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def test_compacting_a_stopped_brokers_offsets_keeps_every_answer(tmp_path):
    data = tmp_path / "data"
    with run_in_thread(data_dir=str(data), fsync="never") as broker:
        _commit_many_times(broker.bootstrap_servers, "billing", rounds=30)
        before = _committed(broker.bootstrap_servers, "billing")
    assert before == {0: 300, 1: 301}

    verify = _groupcoord("log", "verify", "--data-dir", str(data))
    assert verify.returncode == 0, verify.stderr

    out = _groupcoord("log", "compact", "--data-dir", str(data), "--topic", "__consumer_offsets", "--roll")
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)
    assert stats["records_read"] >= 60 and stats["records_kept"] <= stats["records_read"] - 58

    with run_in_thread(data_dir=str(data), fsync="never") as broker:
        assert _committed(broker.bootstrap_servers, "billing") == before


def test_maintenance_refuses_a_directory_a_running_broker_holds(tmp_path):
    data = tmp_path / "data"
    with run_in_thread(data_dir=str(data), fsync="never"):
        out = _groupcoord("log", "compact", "--data-dir", str(data))
    assert out.returncode == 1
    assert "in use by another groupcoord process" in out.stderr
