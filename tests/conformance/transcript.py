"""Normalised scenario transcripts: what a broker answered, minus everything that legitimately varies.

Member ids, group ids and topic names differ per broker and per run, so they are replaced by the labels
the scenario gave them ("A", "orders", ...). Anything the transcript cannot name becomes "<unrecognised>",
never its raw value, so two runs of a correct broker always produce equal transcripts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

UNRECOGNISED = "<unrecognised>"
Observation = dict[str, Any]


def error_name(code: int) -> str:
    return ErrorCode(int(code)).name.upper()


@dataclass
class Transcript:
    steps: list[Observation] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)

    def learn(self, raw: str, alias: str) -> None:
        if raw:
            self.aliases[raw] = alias

    def alias(self, raw: str | None) -> str | None:
        if raw is None or raw == "":
            return raw
        return self.aliases.get(raw, UNRECOGNISED)

    def record(self, step: str, **facts: Any) -> Observation:
        observation = {"step": step, **facts}
        self.steps.append(observation)
        return observation
