"""pytest plugin (entry point `groupcoord`): a live broker per test, over real sockets.

    def test_consume(groupcoord_broker):
        consumer = KafkaConsumer(bootstrap_servers=groupcoord_broker.bootstrap_servers, ...)

    @pytest.mark.groupcoord(group_initial_rebalance_delay_ms=3000)   # settings for this test's broker
    def test_slow_first_join(groupcoord_broker):
        assert groupcoord_broker.config.group_initial_rebalance_delay_ms == 3000

The broker runs on its own event loop in a background thread, so blocking clients (kafka-python,
confluent-kafka) and asyncio clients (aiokafka) both work from the test. Test defaults differ from the
daemon's where speed matters and semantics do not: no initial rebalance delay, no KIP-848 assignment
interval, fsync=never, metrics on a free port.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest
import structlog

from .broker import Broker, run_in_thread
from .ops.logging import configure_logging

TEST_DEFAULTS: dict[str, Any] = {
    "group_initial_rebalance_delay_ms": 0,
    # KIP-848 groups assign in the heartbeat that bumps the epoch (Kafka 4.3's 1 s batching off), as
    # group_initial_rebalance_delay_ms above does for classic groups, and as the reference Kafka the
    # conformance goldens were recorded from runs.
    "group_consumer_assignment_interval_ms": 0,
    "fsync": "never",
    "metrics_port": -1,
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "groupcoord(**settings): settings for the groupcoord_broker fixture")
    if not structlog.is_configured():
        # structlog's unconfigured default prints every level; in a test run the broker's info lines
        # (state transitions, joins, expiries) are what explain a failure, its debug lines are noise.
        configure_logging("info", "console")


def _settings(request: pytest.FixtureRequest, extra: dict[str, Any]) -> dict[str, Any]:
    settings = dict(TEST_DEFAULTS)
    marker = request.node.get_closest_marker("groupcoord")
    if marker is not None:
        settings.update(marker.kwargs)
    settings.update(extra)
    return settings


@pytest.fixture
def groupcoord_broker_factory(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Broker]]:
    """Start further brokers in one test: `factory(**settings)`; all are stopped at teardown."""
    stack: list[Any] = []

    def start(**extra: Any) -> Broker:
        settings = _settings(request, extra)
        settings.setdefault("data_dir", str(tmp_path_factory.mktemp("groupcoord")))
        cm = run_in_thread(**settings)
        broker = cm.__enter__()
        stack.append(cm)
        return broker

    yield start
    while stack:
        stack.pop().__exit__(None, None, None)


@pytest.fixture
def groupcoord_broker(groupcoord_broker_factory: Callable[..., Broker]) -> Broker:
    """A running broker (`.bootstrap_servers`, `.metrics_port`, `.data_dir`) for one test."""
    return groupcoord_broker_factory()
