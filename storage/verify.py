"""Read-only check of every batch in a data directory (``groupcoord log verify``).

Opening the logs is not a check: after a clean shutdown recovery trusts the segments without reading them,
and it also changes the directory (consumes the clean-shutdown marker, cuts torn tails). This walks every
segment of every partition without writing anything and checks each batch's length, magic, CRC-32C and
offset order, naming the file, byte position and base offset of the first bad batch of each segment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.record_batch import HEADER_SIZE
from groupcoord.storage.file_pool import FilePool
from groupcoord.storage.log import parse_partition_dir
from groupcoord.storage.recovery import CLEAN_SHUTDOWN_MARKER
from groupcoord.storage.segment import LOG_SUFFIX, Segment, parse_segment_filename

_READ_ONLY_FILES = 8


class DamageKind(Enum):
    CORRUPT = "corrupt"
    """Acknowledged data is bad: valid batches follow it, or the broker had shut down cleanly."""
    TORN_TAIL = "torn tail"
    """The last write of an unclean stop was cut short; the next start truncates it (nothing acknowledged)."""


@frozen_dataclass
class Damage:
    kind: DamageKind
    segment: Path
    position: int
    base_offset: int | None
    reason: str

    def describe(self) -> str:
        offset = "" if self.base_offset is None else f" (batch base offset {self.base_offset})"
        return f"{self.kind.value}: {self.segment} at byte position {self.position}{offset}: {self.reason}"


@dataclass(slots=True)
class PartitionReport:
    name: str
    segments: int = 0
    bytes_checked: int = 0
    end_offset: int = 0
    damage: list[Damage] = field(default_factory=list)


@dataclass(slots=True)
class VerifyReport:
    partitions: list[PartitionReport] = field(default_factory=list)

    @property
    def corrupt(self) -> list[Damage]:
        return [d for p in self.partitions for d in p.damage if d.kind is DamageKind.CORRUPT]

    @property
    def bytes_checked(self) -> int:
        return sum(p.bytes_checked for p in self.partitions)


def verify_data_dir(data_dir: Path) -> VerifyReport:
    files = FilePool(_READ_ONLY_FILES)
    report = VerifyReport()
    for entry in sorted(os.listdir(data_dir)):
        path = Path(data_dir) / entry
        if path.is_dir() and parse_partition_dir(entry) is not None:
            report.partitions.append(verify_partition(path, files))
    return report


def verify_partition(directory: Path, files: FilePool) -> PartitionReport:
    report = PartitionReport(directory.name)
    clean = (directory / CLEAN_SHUTDOWN_MARKER).exists()
    bases = sorted(parsed[0] for name in os.listdir(directory)
                   if (parsed := parse_segment_filename(name)) and parsed[1] == LOG_SUFFIX)
    for number, base in enumerate(bases):
        segment = Segment.open_existing(directory, base, files)
        try:
            report.segments += 1
            outcome = segment.scan(0, verify=True, index_interval_bytes=1 << 30)
            report.bytes_checked += outcome.valid_end
            report.end_offset = max(report.end_offset, segment.next_offset)
            if outcome.problem is not None:
                last = number == len(bases) - 1
                torn = not clean and last and segment.find_valid_batch_after(outcome.valid_end) is None
                report.damage.append(Damage(DamageKind.TORN_TAIL if torn else DamageKind.CORRUPT, segment.log_path,
                                            outcome.valid_end, _base_offset_at(segment, outcome.valid_end),
                                            outcome.problem))
        finally:
            segment.close()
    return report


def _base_offset_at(segment: Segment, position: int) -> int | None:
    head = segment.read(position, HEADER_SIZE)
    return int.from_bytes(head[:8], "big", signed=True) if len(head) >= 8 else None
