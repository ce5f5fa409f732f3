"""A restart keeps the share-group state (KIP-932), against Kafka 4.3.1: the same story is told to both brokers,
each restarted mid-story on its own data directory and port, and the transcripts must be equal.

Kafka's transcript comes from the reference broker restarted in place (``KafkaBroker.restart``: SIGTERM, then a
new process on the same data directory and ports); the recorded one stands in where Java is missing. groupcoord
runs in this test's event loop so that it can be stopped and started again on its data directory.
"""

from __future__ import annotations

import pytest

from groupcoord.coordinator.broker import Broker

from tests.conformance.share_partitions.golden import GOLDEN_DIR, restart_recorder
from tests.conformance.share_partitions.scenarios import RESTART_SCENARIOS
from tests.conformance.differential import DifferentialSuite
from tests.reference.kafka_broker import SHARED_BROKER

pytestmark = pytest.mark.timeout(240)

RECORDED = DifferentialSuite(RESTART_SCENARIOS, GOLDEN_DIR, known_differences={})


class RestartableGroupcoord:
    """groupcoord in this event loop; ``restart`` stops it and starts a new Broker on the same data directory
    and port, as a restarted daemon would be."""

    def __init__(self, tmp_path) -> None:
        self.data_dir = str(tmp_path / "data")
        self.broker: Broker | None = None

    async def start(self, port: int = 0) -> Broker:
        self.broker = Broker(listen=f"127.0.0.1:{port}", data_dir=self.data_dir, group_initial_rebalance_delay_ms=0)
        await self.broker.start()
        return self.broker

    async def restart(self) -> None:
        port = self.broker.port
        await self.broker.stop()
        await self.start(port)

    async def stop(self) -> None:
        if self.broker is not None:
            await self.broker.stop()


@pytest.mark.full("Kafka 4.3.1 replaying the recorded scenarios live")
@pytest.mark.reference
@pytest.mark.parametrize("name", list(RESTART_SCENARIOS))
async def test_kafka_still_answers_as_recorded_across_a_restart(name, kafka_reference):
    live = restart_recorder(SHARED_BROKER.broker)
    assert await live.scenarios[name].run(kafka_reference) == RECORDED.load_golden(name)


@pytest.mark.parametrize("name", list(RESTART_SCENARIOS))
async def test_groupcoord_answers_like_kafka_across_a_restart(name, tmp_path):
    """Against the transcript recorded from Kafka (the live one is checked above: restarting the reference
    twice per run would cost CI a minute)."""
    expected = RECORDED.load_golden(name)
    groupcoord = RestartableGroupcoord(tmp_path)
    broker = await groupcoord.start()
    try:
        actual = await RESTART_SCENARIOS[name].run(broker.bootstrap_servers, restart=groupcoord.restart)
    finally:
        await groupcoord.stop()
    assert actual == expected


def test_every_restart_scenario_has_a_recorded_kafka_transcript():
    RECORDED.assert_every_scenario_is_recorded()
