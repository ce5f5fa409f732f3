"""Kafka's recorded answers to the admin scenarios, so a machine without Java still holds groupcoord to them.

Regenerate after changing a scenario (needs Java 17 and Maven; starts the Kafka reference):
    .venv/bin/python -m tests.conformance.admin.golden [scenario ...]
"""

from __future__ import annotations

from pathlib import Path

from tests.conformance.admin.scenarios import SCENARIOS
from tests.conformance.differential import DifferentialSuite

GOLDEN_DIR = Path(__file__).parent / "golden"
RECORDER = DifferentialSuite(SCENARIOS, GOLDEN_DIR, known_differences={})
load_golden = RECORDER.load_golden

if __name__ == "__main__":
    RECORDER.record_from_reference()
