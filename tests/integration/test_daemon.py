"""The daemon as an operator runs it: announces where it listens, stops cleanly on SIGTERM and SIGINT."""

import json
import signal

from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient

from tests.support.daemon import Daemon


def test_daemon_announces_its_address_and_exits_zero_on_sigterm(tmp_path):
    daemon = Daemon(tmp_path / "data").start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=daemon.bootstrap_servers)
        assert "__consumer_offsets" in admin.list_topics()
        admin.close()
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    assert any(line.startswith("listening on 127.0.0.1:") for line in daemon.output)
    events = [json.loads(line)["event"] for line in daemon.output if line.startswith("{")]
    assert "broker started" in events


def test_daemon_exits_zero_on_sigint_and_keeps_its_cluster_id(tmp_path):
    first = Daemon(tmp_path / "data").start()
    admin = KafkaAdminClient(bootstrap_servers=first.bootstrap_servers)
    cluster_id = admin.describe_cluster()["cluster_id"]
    admin.close()
    first.proc.send_signal(signal.SIGINT)
    assert first.proc.wait(20) == 0

    second = Daemon(tmp_path / "data").start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=second.bootstrap_servers)
        assert admin.describe_cluster()["cluster_id"] == cluster_id
        admin.close()
    finally:
        second.kill()


def test_settings_come_from_environment_when_no_flag_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUPCOORD_OFFSETS_TOPIC_NUM_PARTITIONS", "7")
    daemon = Daemon(tmp_path / "data").start()
    try:
        metadata = AdminClient({"bootstrap.servers": daemon.bootstrap_servers}).list_topics(timeout=10)
        assert len(metadata.topics["__consumer_offsets"].partitions) == 7
    finally:
        daemon.kill()
