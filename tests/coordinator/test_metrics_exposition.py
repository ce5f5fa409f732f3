"""/metrics is byte for byte what prometheus-client gives, although the broker imports it only at the first scrape.

The broker's metrics are plain numbers until scraped (coordinator/metric_families.py says why); those that were
prometheus-client's Counter, Gauge and Histogram must still expose exactly what those would, ``_created`` series
included. Here every such metric of a BrokerMetrics is mirrored by prometheus-client's own metric of the same
name, documentation, labels and buckets, moved by the same calls, and the two registries' texts are compared
whole; and a live broker's scrape is compared with ``generate_latest`` of its registry.
"""

from __future__ import annotations

import time
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.metrics import (
    BrokerMetrics,
    CreatedHistogram,
    PlainCounter,
    PlainGauge,
    PlainLabelledCounter,
)
from groupcoord.storage.cleaner import CleanerStats

NOW = 1_700_000_000.25


def _mirrored(metrics: BrokerMetrics) -> CollectorRegistry:
    """A registry in which each plain stand-in for a prometheus-client metric is that metric, moved (from now on)
    by whatever moves the stand-in; the broker's other collectors are registered as they are, in the same order."""
    reference = CollectorRegistry(auto_describe=True)
    for collector in metrics._collectors:
        if isinstance(collector, PlainGauge):
            theirs = Gauge(collector.name, collector.documentation, registry=reference)
            _forward(collector, "inc", theirs.inc)
            _forward(collector, "dec", theirs.dec)
        elif isinstance(collector, PlainCounter):
            theirs = Counter(collector.name, collector.documentation, registry=reference)
            _forward(collector, "inc", theirs.inc)
        elif isinstance(collector, PlainLabelledCounter):
            theirs = Counter(collector.name, collector.documentation, list(collector.labels), registry=reference)
            _forward(collector, "inc", lambda values, amount=1, theirs=theirs: theirs.labels(*values).inc(amount))
        elif isinstance(collector, CreatedHistogram):
            theirs = Histogram(collector.name, collector.documentation, buckets=collector.bounds, registry=reference)
            _forward(collector, "observe", theirs.observe)
        else:
            reference.register(collector)
    return reference


def _forward(plain: object, method: str, theirs) -> None:
    mine = getattr(plain, method)

    def both(*args, **kwargs):
        theirs(*args, **kwargs)
        return mine(*args, **kwargs)

    setattr(plain, method, both)


class _Groups:
    def iter_groups(self):
        return iter([])

    def committed_offsets(self, group_id):
        return {}


def _traffic(m: BrokerMetrics) -> None:
    """Every observer method, some twice, some label values more than once."""
    for _ in range(3):
        m.connection_opened()
    m.connection_closed()
    for limit in ("max.connections", "max.connections.per.ip", "max.connections"):
        m.connection_refused(limit)
    m.connection_expired("connections.max.idle.ms")
    m.accept_failed("EMFILE")
    m.observe_request("Heartbeat", 0, 0.0004)
    m.observe_requests("JoinGroup", 27, 0.3, 4)
    m.on_authorization_denied("Produce")
    m.authentication("SASL_PLAINTEXT", "PLAIN", True)
    m.authentication("SASL_PLAINTEXT", "PLAIN", False, reauthentication=True)
    m.on_state_change("g", GroupState.EMPTY, GroupState.PREPARING_REBALANCE)
    m.on_rebalance("g", 1, 0.7, "adding new member x; client reason: y")
    m.on_member_joined("g", "m")
    m.on_member_expired("g", "m")
    m.on_offsets_committed("g", 4)
    m.on_offsets_expired("g", 2)
    m.on_offsets_expired("g", 0)
    m.on_shard_loaded(3, 0.02, 10)
    m.on_shard_loaded(4, 7.0, 5)
    m.on_append(0.0003, 100)
    m.on_fsync(0.002)
    m.on_clean(CleanerStats(partitions_cleaned=1, bytes_read=10, bytes_written=5, seconds=0.25))
    for topic, n in (("t", 10), ("u", 3), ("t", 1)):
        m.on_bytes_in(topic, n)
    m.on_bytes_out("t", 7)
    m.on_transaction_ended("x", True)
    m.on_transaction_ended("y", False)
    m.on_transaction_timed_out("x")
    m.on_producer_fenced("x")
    m.on_txn_shard_loaded(1, 0.08, 3)
    m.on_txn_shard_loaded(2, 12.0, 3)
    m.on_write_failed("t-0", OSError())
    m.on_write_recovered("t-0")


@pytest.mark.parametrize("created_series", [True, False])
def test_the_exposition_is_prometheus_clients_own_for_the_same_calls(monkeypatch, created_series):
    from prometheus_client import metrics as prometheus_metrics

    monkeypatch.setattr(time, "time", lambda: NOW)  # the `_created` stamps: the same moment on both sides
    monkeypatch.setattr(prometheus_metrics, "_use_created", created_series)
    m = BrokerMetrics()
    reference = _mirrored(m)
    _traffic(m)
    m.attach_state_sources(_Groups(), None)
    ours = m.exposition()
    assert ours == generate_latest(reference)
    assert (b"groupcoord_bytes_in_created" in ours) is created_series


def test_a_counter_refuses_a_negative_increment_as_prometheus_clients_does():
    m = BrokerMetrics()
    with pytest.raises(ValueError):
        m.on_offsets_expired("g", -1)
    with pytest.raises(ValueError):
        m.on_bytes_in("t", -1)
    with pytest.raises(ValueError):
        Counter("c", "c", registry=CollectorRegistry()).inc(-1)


def test_a_registry_given_is_filled_at_once():
    registry = CollectorRegistry(auto_describe=True)
    m = BrokerMetrics(registry)
    m.connection_opened()
    assert m.registry is registry
    assert registry.get_sample_value("groupcoord_connections") == 1.0


def test_a_registry_that_does_not_auto_describe_still_learns_the_names():
    # prometheus-client's metrics describe themselves: a registry refuses a second metric of the same name
    registry = CollectorRegistry()
    BrokerMetrics(registry)
    with pytest.raises(ValueError):
        Counter("groupcoord_offsets_expired", "again", registry=registry)
    with pytest.raises(ValueError):
        Gauge("groupcoord_connections", "again", registry=registry)


def _scrape(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        return response.read()


def test_a_live_brokers_scrape_is_generate_latest_of_its_registry(groupcoord_broker):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=groupcoord_broker.bootstrap_servers)
    for i in range(5):
        producer.send("scraped", b"x" * i)
    producer.flush(10)
    producer.close()
    registry = groupcoord_broker.metrics.registry
    for _ in range(50):  # until nothing moves between two scrapes (the producer's connection closing)
        before = _scrape(groupcoord_broker.metrics_port)
        theirs = generate_latest(registry)
        if _scrape(groupcoord_broker.metrics_port) == before:
            break
        time.sleep(0.1)
    assert before == theirs
    assert b'groupcoord_bytes_in_total{topic="scraped"}' in before
    assert b"groupcoord_bytes_in_created" in before
