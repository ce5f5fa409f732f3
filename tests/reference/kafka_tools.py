"""Kafka's own DumpLogSegments, run on segment files, and its output parsed back into data.

Kafka's tool is the independent reader of the on-disk format: if it decodes our segments, validates their
CRCs and finds our indexes consistent, Kafka's tooling can read a groupcoord data directory.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.reference.kafka_distribution import KafkaDistribution

DUMP_TIMEOUT_S = 120.0


@dataclass
class DumpedBatch:
    header: dict[str, str]
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def is_valid(self) -> bool:
        return self.header.get("isvalid") == "true"


@dataclass
class Dump:
    output: str
    batches: list[DumpedBatch]

    @property
    def records(self) -> list[dict[str, Any]]:
        return [record for batch in self.batches for record in batch.records]


def dump_log_segments(tools: KafkaDistribution, files: list[Path], *options: str) -> Dump:
    """Runs org.apache.kafka.tools.DumpLogSegments; a non-zero exit is a test failure with Kafka's output."""
    done = subprocess.run(
        ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", tools.classpath,
         "org.apache.kafka.tools.DumpLogSegments", "--files", ",".join(str(f) for f in files), *options],
        capture_output=True, text=True, timeout=DUMP_TIMEOUT_S)
    assert done.returncode == 0, f"DumpLogSegments exited {done.returncode}: {(done.stdout + done.stderr)[-3000:]}"
    return Dump(done.stdout, parse_dump(done.stdout))


def parse_dump(output: str) -> list[DumpedBatch]:
    """Batch lines are 'name: value' pairs; record lines start with '| ' and end in 'key: … payload: …',
    which the offsets decoder prints as JSON and --print-data-log as text."""
    batches: list[DumpedBatch] = []
    for line in output.splitlines():
        if line.startswith("baseOffset:"):
            batches.append(DumpedBatch(_pairs(line)))
        elif line.startswith("| offset:") and batches:
            batches[-1].records.append(_record(line[2:]))
    return batches


def _pairs(text: str) -> dict[str, str]:
    tokens = text.split()
    return {tokens[i].rstrip(":"): tokens[i + 1] for i in range(0, len(tokens) - 1, 2) if tokens[i].endswith(":")}


def _record(text: str) -> dict[str, Any]:
    head, _, rest = text.partition(" key: ")
    record: dict[str, Any] = _pairs(head)
    if rest:
        key, _, payload = rest.partition(" payload: ")
        record["key"], record["payload"] = _maybe_json(key), _maybe_json(payload)
    return record


def _maybe_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
