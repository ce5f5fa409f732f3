"""Storage failures that callers must be able to tell apart."""

from __future__ import annotations

from pathlib import Path


class CorruptLogError(Exception):
    """Invalid bytes sit in front of valid data, so truncating would lose acknowledged records.

    Recovery only ever cuts a torn *tail*; anything else needs an operator, and this error
    names the partition, segment file and position so they can find it. Reads raise it too when a
    batch that recovery trusted without reading (below the recovery point) fails its CRC: the
    partition then goes offline instead of serving the bytes.
    """

    def __init__(self, partition: str, segment: Path, position: int, reason: str, *,
                 consequence: str = "valid batches follow, refusing to truncate") -> None:
        super().__init__(f"corrupt log in partition {partition}: segment {segment.name} at byte position "
                         f"{position}: {reason}; {consequence}")
        self.partition = partition
        self.segment = segment
        self.position = position
        self.reason = reason


class LogClosedError(RuntimeError):
    """The log was closed or deleted while an operation wanted it."""


class NotCached(Exception):
    """A read that must not wait for the disk (``Segment.read_cached``) found bytes the page cache does not hold:
    the caller reads them again where waiting is allowed (an executor thread)."""
