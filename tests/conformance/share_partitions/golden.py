"""Kafka's recorded share-partition answers, so a machine without Java still holds groupcoord to them.

Regenerate after changing a scenario (needs Java 17 and Maven; starts the Kafka reference):
    .venv/bin/python -m tests.conformance.share_partitions.golden [scenario ...]
The restart scenarios (RESTART_SCENARIOS) restart that reference broker in place, on its data directory and
ports, where the story says so.
"""

from __future__ import annotations

import asyncio
import sys
from functools import partial
from pathlib import Path

from tests.conformance.differential import DifferentialSuite
from tests.conformance.share_partitions.scenarios import RESTART_SCENARIOS, SCENARIOS, Scenario

GOLDEN_DIR = Path(__file__).parent / "golden"
RECORDER = DifferentialSuite(SCENARIOS, GOLDEN_DIR, known_differences={})


def kafka_restart_hook(broker):
    """A scenario's restart hook for a Kafka reference broker (``KafkaBroker.restart`` off the event loop)."""
    async def restart() -> None:
        await asyncio.to_thread(broker.restart)
    return restart


def restart_recorder(broker) -> DifferentialSuite:
    """The restart scenarios bound to ``broker``'s restart, as a suite that can record and compare them."""
    bound = {name: Scenario(name, partial(s.run, restart=kafka_restart_hook(broker)))
             for name, s in RESTART_SCENARIOS.items()}
    return DifferentialSuite(bound, GOLDEN_DIR, known_differences={})


def record_from_reference(names: list[str]) -> None:
    from tests.reference.kafka_broker import SHARED_BROKER

    broker = SHARED_BROKER.acquire()
    try:
        plain = [n for n in names if n in SCENARIOS] if names else list(SCENARIOS)
        restarts = [n for n in names if n in RESTART_SCENARIOS] if names else list(RESTART_SCENARIOS)
        version = broker.distribution.version
        if plain:
            asyncio.run(RECORDER.record(broker.bootstrap_servers, version, plain))
        if restarts:
            asyncio.run(restart_recorder(broker).record(broker.bootstrap_servers, version, restarts))
    finally:
        SHARED_BROKER.release()


if __name__ == "__main__":
    record_from_reference(sys.argv[1:])
