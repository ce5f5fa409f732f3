"""groupcoord must answer every transaction scenario as Kafka 4.3.1 does (Transactions V1 clients).

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.conformance.differential import DifferentialSuite, differential_tests
from tests.conformance.transactions.golden import GOLDEN_DIR
from tests.conformance.transactions.requests import VERSIONS
from tests.conformance.transactions.scenarios import ABORT_CHECK_INTERVAL_MS, SCENARIOS
from tests.conformance.transactions.session import TxnSession

pytestmark = pytest.mark.timeout(120)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {}
# restart_between_prepare_and_complete is also run plainly (its hooks do nothing, as against Kafka); its
# point is test_a_restart_between_prepare_and_complete_reads_as_kafka_without_one below.

SUITE = DifferentialSuite(SCENARIOS, GOLDEN_DIR, KNOWN_DIFFERENCES)
BROKER = pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0,
                                transaction_abort_timed_out_transaction_cleanup_interval_ms=ABORT_CHECK_INTERVAL_MS)


globals().update(differential_tests(SUITE, BROKER, VERSIONS))


class RestartBetweenPrepareAndComplete:
    """Holds the broker's markers back once EndTxn is asked for, and restarts the broker (same data
    directory, same port) right after EndTxn is answered: PrepareCommit is durable, no marker is written."""

    def __init__(self, tmp_path) -> None:
        self.data_dir = tmp_path / "data"
        self.broker = None
        self.held = asyncio.Event()

    async def start(self, port: int = 0):
        from groupcoord.coordinator.broker import Broker

        self.broker = Broker(listen=f"127.0.0.1:{port}", data_dir=str(self.data_dir), group_initial_rebalance_delay_ms=0,
                             transaction_abort_timed_out_transaction_cleanup_interval_ms=ABORT_CHECK_INTERVAL_MS)
        await self.broker.start()
        return self.broker

    async def before_end_txn(self, session) -> None:
        markers = self.broker.transactions.markers
        held = self.held

        class Held:
            async def write(self, marker):
                held.set()
                await asyncio.Event().wait()  # never written: the broker goes down first

        self.original = markers
        self.broker.transactions.markers = Held()

    async def after_end_txn(self, session) -> None:
        await asyncio.wait_for(self.held.wait(), 10)
        states = {m.state.display for m in self.broker.transactions.iter_transactions()}
        assert "PrepareCommit" in states, states
        port = self.broker.port
        await self.broker.stop()
        await session.reconnect()
        await self.start(port)


@pytest.mark.timeout(120)
async def test_a_restart_between_prepare_and_complete_reads_as_kafka_without_one(tmp_path, kafka_reference_if_available):
    name = "restart_between_prepare_and_complete"
    expected = await SUITE.kafka_transcript(name, kafka_reference_if_available)
    restart = RestartBetweenPrepareAndComplete(tmp_path)
    broker = await restart.start()
    try:
        async with TxnSession(broker.bootstrap_servers, hooks=restart) as session:
            await SCENARIOS[name].story(session)
            actual = session.transcript.steps
    finally:
        await restart.broker.stop()
    assert actual == expected
