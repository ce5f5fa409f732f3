"""The Kafka tool table (kafka_tool_table.py): printed after a run that ran tool tests, and written to the file
``GROUPCOORD_TOOL_TABLE`` names."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.reference.kafka_tool_table import TABLE, write

_STARTED = time.monotonic()


def pytest_terminal_summary(terminalreporter) -> None:
    if not TABLE.rows:
        return
    terminalreporter.section("Kafka tool commands: groupcoord vs Kafka 4.3.1")
    terminalreporter.write_line(TABLE.markdown())
    target = os.environ.get("GROUPCOORD_TOOL_TABLE")
    if target:
        write(Path(target), TABLE, time.monotonic() - _STARTED)
        terminalreporter.write_line(f"written to {target}")
