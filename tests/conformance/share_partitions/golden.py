"""Kafka's recorded share-partition answers, so a machine without Java still holds groupcoord to them.

Regenerate after changing a scenario (needs Java 17 and Maven; starts the Kafka reference):
    .venv/bin/python -m tests.conformance.share_partitions.golden [scenario ...]
"""

from __future__ import annotations

from pathlib import Path

from tests.conformance.differential import DifferentialSuite
from tests.conformance.share_partitions.scenarios import SCENARIOS

GOLDEN_DIR = Path(__file__).parent / "golden"
RECORDER = DifferentialSuite(SCENARIOS, GOLDEN_DIR, known_differences={})

if __name__ == "__main__":
    RECORDER.record_from_reference()
