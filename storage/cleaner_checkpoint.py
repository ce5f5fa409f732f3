"""Kafka's ``cleaner-offset-checkpoint``: how far the cleaner got in each compacted log.

The file lives in the data directory and uses Kafka's checkpoint format, so a data directory
moved between Kafka and groupcoord keeps its cleaner progress::

    0                 <- version
    2                 <- number of entries
    orders 0 1200     <- topic partition first-dirty-offset
    orders 1 800

It is rewritten whole through a temp file that is fsynced and renamed over the old one, so a
crash leaves either the previous or the new checkpoint. A checkpoint that cannot be read is
logged and treated as empty: the cleaner then judges every log as fully dirty (what Kafka does
too), which costs one extra compaction pass, never data.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import structlog

from groupcoord.storage.segment import fsync_directory

CLEANER_CHECKPOINT_FILE: Final = "cleaner-offset-checkpoint"
CHECKPOINT_VERSION: Final = 0
# Patterns compiled by their first use (re's cache), not at start-up: most starts read no checkpoint file.
_WHITESPACE = r"\s+"
_INTEGER = r"[+-]?[0-9]+"  # what Java's parseInt/parseLong accept

_log = structlog.get_logger("groupcoord.storage.cleaner_checkpoint")

TopicPartition = tuple[str, int]


class CheckpointFormatError(ValueError):
    """The checkpoint file is not in Kafka's offset checkpoint format."""


def format_checkpoint(offsets: Mapping[TopicPartition, int]) -> str:
    lines = [str(CHECKPOINT_VERSION), str(len(offsets))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    return "\n".join(lines) + "\n"


def parse_checkpoint(text: str) -> dict[TopicPartition, int]:
    """Kafka's CheckpointReadBuffer: an empty file, or one cut after the version, holds no entries."""
    lines = text.splitlines()
    if not lines:
        return {}
    version = _parse_int(lines[0])
    if version != CHECKPOINT_VERSION:
        raise CheckpointFormatError(f"unrecognised checkpoint version {version}, expected {CHECKPOINT_VERSION}")
    if len(lines) == 1:
        return {}
    expected = _parse_int(lines[1])
    offsets: dict[TopicPartition, int] = {}
    for line in lines[2:]:
        partition, offset = _parse_entry(line)
        offsets[partition] = offset
    if len(lines) - 2 != expected:
        raise CheckpointFormatError(f"expected {expected} entries but found {len(lines) - 2}")
    return offsets


def _parse_entry(line: str) -> tuple[TopicPartition, int]:
    parts = re.split(_WHITESPACE, line)
    if len(parts) != 3:
        raise CheckpointFormatError(f"malformed line {line!r}")
    topic, partition, offset = parts
    return (topic, _parse_int(partition)), _parse_int(offset)


def _parse_int(text: str) -> int:
    if not re.fullmatch(_INTEGER, text):
        raise CheckpointFormatError(f"malformed line {text!r}")
    return int(text)


class CleanerCheckpoint:
    """The checkpoint file of one data directory; ``write`` may run on any thread."""

    FILE_NAME: str = CLEANER_CHECKPOINT_FILE
    DESCRIPTION: str = "cleaner checkpoint"
    IF_UNREADABLE: str = "treating every log as dirty"

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / self.FILE_NAME
        self._lock = threading.Lock()

    def read(self) -> dict[TopicPartition, int]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            _log.error(f"cannot read the {self.DESCRIPTION}; {self.IF_UNREADABLE}", path=str(self.path), error=str(exc))
            return {}
        try:
            return parse_checkpoint(text)
        except CheckpointFormatError as exc:
            _log.error(f"malformed {self.DESCRIPTION}; {self.IF_UNREADABLE}", path=str(self.path), error=str(exc))
            return {}

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Replace the file atomically (temp file, fsync, rename, fsync the directory)."""
        data = format_checkpoint(offsets).encode("utf-8")
        tmp = self.path.with_name(self.path.name + ".tmp")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
            fsync_directory(self.path.parent)
