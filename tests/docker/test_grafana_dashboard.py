"""The Grafana dashboard under docker/ asks only for metrics the broker exports, and the compose file
provisions it: every PromQL expression's metric names are found in a live broker's /metrics exposition."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docker" / "grafana" / "dashboards" / "groupcoord.json"
METRIC = re.compile(r"\bgroupcoord_[a-z_]+\b")
REQUIRED_TOPICS = ("groupcoord_groups", "groupcoord_rebalances", "groupcoord_consumer_lag",
                   "groupcoord_request_duration_seconds", "groupcoord_offset_commits")


def _expressions() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def test_the_dashboard_covers_what_operators_watch():
    used = " ".join(_expressions())
    for metric in REQUIRED_TOPICS:  # groups by state, rebalances, lag per group, request latency, commit rate
        assert metric in used, metric


def test_every_query_names_a_metric_the_broker_exports(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(10):
        producer.send("dashboard", b"%d" % i)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer("dashboard", bootstrap_servers=bootstrap, group_id="dashboard-readers",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    got = []
    deadline = time.monotonic() + 30  # polled until all ten arrive (not a fixed 5 s of silence after them)
    while len(got) < 10 and time.monotonic() < deadline:
        got += [m.value for records in consumer.poll(timeout_ms=500).values() for m in records]
    assert sorted(got) == sorted(b"%d" % i for i in range(10))
    consumer.commit()
    consumer.close()

    exposition = generate_latest(groupcoord_broker.metrics.registry).decode()
    exported = {sample.name for family in text_string_to_metric_families(exposition) for sample in family.samples}
    exported |= {family.name for family in text_string_to_metric_families(exposition)}
    missing = {name for expr in _expressions() for name in METRIC.findall(expr)} - exported
    assert not missing, f"the dashboard queries metrics the broker does not export: {sorted(missing)}"


def test_the_compose_file_provisions_the_dashboard():
    compose = (ROOT / "docker" / "compose.yaml").read_text()
    assert "./grafana/dashboards:/var/lib/grafana/dashboards" in compose
    assert "./grafana/provisioning:/etc/grafana/provisioning" in compose
    provider = (ROOT / "docker" / "grafana" / "provisioning" / "dashboards" / "groupcoord.yaml").read_text()
    assert "path: /var/lib/grafana/dashboards" in provider
    assert "groupcoord:9404" in (ROOT / "docker" / "prometheus.yml").read_text()
