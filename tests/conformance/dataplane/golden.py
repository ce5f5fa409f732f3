"""Kafka's recorded data-plane answers, so a machine without Java still holds groupcoord to them.

Regenerate after changing a scenario (needs Java 17 and Maven; starts the Kafka reference):
    .venv/bin/python -m tests.conformance.dataplane.golden
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.conformance.dataplane.scenarios import SCENARIOS
from tests.conformance.transcript import Observation

GOLDEN_DIR = Path(__file__).parent / "golden"


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.json"


def load_golden(name: str) -> list[Observation]:
    return json.loads(golden_path(name).read_text())["transcript"]


def save_golden(name: str, transcript: list[Observation], kafka_version: str) -> None:
    document = {"scenario": name, "recorded_from": f"Apache Kafka {kafka_version}", "transcript": transcript}
    golden_path(name).write_text(json.dumps(document, indent=1) + "\n")


async def record_all(bootstrap: str, kafka_version: str, names: list[str] | None = None) -> None:
    """Runs each scenario twice and keeps it only if both runs agree: a golden file must be reproducible."""
    for name in names or list(SCENARIOS):
        scenario = SCENARIOS[name]
        first, second = await scenario.run(bootstrap), await scenario.run(bootstrap)
        if first != second:
            raise AssertionError(f"scenario {name} is not deterministic against Kafka")
        save_golden(name, first, kafka_version)
        print(f"recorded {name}: {len(first)} observations")


def main() -> None:
    import sys

    from tests.reference.kafka_broker import SHARED_BROKER

    broker = SHARED_BROKER.acquire()
    try:
        asyncio.run(record_all(broker.bootstrap_servers, broker.distribution.version, sys.argv[1:] or None))
    finally:
        SHARED_BROKER.release()


if __name__ == "__main__":
    main()
