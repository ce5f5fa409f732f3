"""What a shard operation asks its runtime to do: append records, then release replies.

Replies are released only once the records of the same Effects (and of every
earlier Effects of the shard) are durable, which is how "answer only after the
write is as durable as the fsync policy promises" is kept without the core doing I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groupcoord.coordinator.groups.offsets_records import AnyKey, AnyValue


@dataclass(slots=True)
class Effects:
    records: list[tuple[AnyKey, AnyValue | None]] = field(default_factory=list)
    replies: list[tuple[Any, dict]] = field(default_factory=list)

    def write(self, key: AnyKey, value: AnyValue | None) -> None:
        self.records.append((key, value))

    def reply(self, token: Any, response: dict) -> None:
        if token is not None:
            self.replies.append((token, response))

    def extend(self, other: "Effects") -> None:
        self.records.extend(other.records)
        self.replies.extend(other.replies)

    def __bool__(self) -> bool:
        return bool(self.records or self.replies)
