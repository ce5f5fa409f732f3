"""pytest fixtures for the real-Kafka reference and for reaching groupcoord from the reference suites.

The suite's root conftest imports these; the broker behind `kafka_reference` is
shared process-wide, so it starts at most once per test session.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.reference.kafka_broker import SHARED_BROKER, KafkaBroker, SharedKafkaBroker
from tests.reference.kafka_distribution import KafkaDistribution, ReferenceUnavailable, ensure_kafka_tools


@contextmanager
def acquired_or_skip(shared: SharedKafkaBroker) -> Iterator[KafkaBroker]:
    """A shared reference broker (plain, SASL, ACL) for the with-block, released after it; the test skips with
    the reason where Java, Maven or the download is missing."""
    try:
        broker = shared.acquire()
    except ReferenceUnavailable as exc:
        pytest.skip(reason=f"Kafka reference unavailable: {exc}")
    try:
        yield broker
    finally:
        shared.release()


@pytest.fixture(scope="session")
def kafka_reference() -> Iterator[str]:
    """Bootstrap address of a real Apache Kafka broker; skips where Java, Maven or the download is missing."""
    with acquired_or_skip(SHARED_BROKER) as broker:
        yield broker.bootstrap_servers


@pytest.fixture(scope="session")
def kafka_reference_if_available() -> Iterator[str | None]:
    """Like kafka_reference, but None instead of a skip, for tests that can fall back to recorded answers."""
    try:
        broker = SHARED_BROKER.acquire()
    except ReferenceUnavailable:
        yield None
        return
    try:
        yield broker.bootstrap_servers
    finally:
        SHARED_BROKER.release()


@pytest.fixture(scope="session")
def kafka_tools() -> KafkaDistribution:
    """Kafka's command-line tools (DumpLogSegments); skips where Java, Maven or the download is missing."""
    try:
        return ensure_kafka_tools()
    except ReferenceUnavailable as exc:
        pytest.skip(reason=f"Kafka tools unavailable: {exc}")


@pytest.fixture
def groupcoord_bootstrap(groupcoord_broker) -> str:
    """groupcoord's bootstrap address, from the `groupcoord_broker` fixture of coordinator.pytest_plugin."""
    return groupcoord_broker.bootstrap_servers
