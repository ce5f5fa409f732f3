"""/metrics of a live groupcoord broker, scraped around a real rebalance of two kafka-python consumers."""

from __future__ import annotations

import urllib.request

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from tests.support.kafka_python_members import commit_when_settled, poll_until, subscribed_consumer

TOPIC = "clicks"
GROUP = "dashboards"


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.status == 200
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(samples: dict, name: str, **labels: str) -> float:
    """Sum of a metric's samples whose labels include `labels`."""
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))


def test_a_rebalance_moves_the_counters_histograms_and_group_gauges(groupcoord_broker):
    bootstrap, port = groupcoord_broker.bootstrap_servers, groupcoord_broker.metrics_port
    assert port > 0, "the test broker serves metrics on a free port"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(TOPIC, num_partitions=2, replication_factor=1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(6):
        producer.send(TOPIC, b"x", partition=i % 2)
    producer.flush(10)
    producer.close()

    first = subscribed_consumer(bootstrap, TOPIC, GROUP, "dash-1")
    second = None
    try:
        poll_until([first], lambda: len(first.assignment()) == 2)
        before = scrape(port)

        second = subscribed_consumer(bootstrap, TOPIC, GROUP, "dash-2")
        poll_until([first, second], lambda: len(first.assignment()) == 1 and len(second.assignment()) == 1)
        commit_when_settled(first, TOPIC, {tp.partition: 1 for tp in first.assignment()})
        commit_when_settled(second, TOPIC, {tp.partition: 2 for tp in second.assignment()})
        during = scrape(port)
    finally:
        first.close()
        if second is not None:
            second.close()

    assert total(during, "groupcoord_rebalances_total") > total(before, "groupcoord_rebalances_total") >= 1
    assert total(during, "groupcoord_rebalance_duration_seconds_count") > total(
        before, "groupcoord_rebalance_duration_seconds_count")
    assert total(during, "groupcoord_requests_total", api="JoinGroup") >= 3
    assert total(during, "groupcoord_request_duration_seconds_count", api="SyncGroup") >= 3
    assert total(during, "groupcoord_request_duration_seconds_count", api="Heartbeat") >= 1
    assert total(during, "groupcoord_connections") >= 2
    assert total(during, "groupcoord_groups", state="Stable") >= 1
    assert total(during, "groupcoord_members") == 2
    assert total(during, "groupcoord_offset_commits_total") - total(before, "groupcoord_offset_commits_total") == 2
    lags = {labels: v for (n, labels), v in during.items() if n == "groupcoord_consumer_lag" and ("group", GROUP) in labels}
    assert sorted(lags.values()) == [1.0, 2.0]  # 3 records per partition, committed at 2 and 1
