"""Opening a partition directory after a clean or an unclean shutdown (Kafka's LogLoader).

After a clean close (marker present) the saved indexes are trusted and only the tail
after the last index entry is walked. After an unclean one, segments wholly below the
recovery point (everything before it was fsynced and its indexes written) are treated the
same way; in the segment holding the recovery point the index entries below it are kept
and the walk starts from the last of them; every batch from there on is checked (length,
magic 2, CRC-32C, offsets moving forward) and indexed. So a restart after a crash reads
what was written since the last checkpoint, not the whole log. A bad batch with nothing
valid after it is a torn tail and is cut (and logged); a bad batch followed by valid
data is corruption, and opening fails with ``CorruptLogError`` rather than drop records.

Trusted bytes are not read here, so their CRCs are checked when they are first read
(``segment_reads``): nothing is served or replayed unchecked.

The recovery point comes from the data directory's ``recovery-point-offset-checkpoint``
(``recovery_checkpoint``), passed in by the LogManager; a log opened on its own also
keeps the one-line ``recovery-point-offset`` file it writes when a segment rolls durably.
The larger of the two counts.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Final

import structlog

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.storage.config import LogConfig
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.file_pool import SHARED_FILES, FilePool
from groupcoord.storage.segment import LOG_SUFFIX, Segment, fsync_directory, parse_segment_filename
from groupcoord.storage.swap import recover_interrupted_swaps

CLEAN_SHUTDOWN_MARKER: Final = ".kafka_cleanshutdown"
RECOVERY_POINT_FILE: Final = "recovery-point-offset"

_log = structlog.get_logger("groupcoord.storage.recovery")


@frozen_dataclass
class RecoveredLog:
    """What recovery leaves of a partition's directory: its segments and the offset below which they are durable."""
    segments: list[Segment]
    recovery_point: int
    """Everything below this offset is durable with its indexes (the log end after a clean shutdown)."""


def recover_segments(directory: Path, name: str, config: LogConfig, *, recovery_point: int = 0,
                     files: FilePool = SHARED_FILES) -> RecoveredLog:
    """Open, validate and (if needed) repair every segment; always returns at least one."""
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / CLEAN_SHUTDOWN_MARKER
    clean = marker.exists()
    recover_interrupted_swaps(directory, name)
    bases = sorted(parsed[0] for entry in os.listdir(directory)
                   if (parsed := parse_segment_filename(entry)) and parsed[1] == LOG_SUFFIX)
    segments = [Segment.open_existing(directory, base, files) for base in bases]
    recovery_point = max(recovery_point, read_recovery_point(directory))
    try:
        index = 0
        while index < len(segments):
            segment = segments[index]
            following = segments[index + 1].base_offset if index + 1 < len(segments) else None
            if clean or (following is not None and following <= recovery_point):
                trust = Trust.WHOLE
            elif segment.base_offset < recovery_point:
                trust = Trust.BELOW_RECOVERY_POINT
            else:
                trust = Trust.NONE
            problem = _load_segment(segment, trust, recovery_point, config.index_interval_bytes)
            if problem is not None:
                _cut_torn_tail(name, segments, index, *problem)
            if segment.rolling_timestamp is None:
                segment.rolling_timestamp = segment.last_modified_ms()
            index += 1
        if not segments:
            segments.append(Segment.create(directory, 0, files))
            fsync_directory(directory)
        for segment in segments:
            segment.load_txn_index()
        if clean:
            marker.unlink()  # from here on a crash counts as unclean
            fsync_directory(directory)
    except BaseException:
        for segment in segments:
            segment.close()
        raise
    for segment in segments[:-1]:
        segment.forget_recent_batches()  # (only the active segment is appended to)
    return RecoveredLog(segments, segments[-1].next_offset if clean else min(recovery_point, segments[-1].next_offset))


class Trust(Enum):
    """How much of a segment recovery may take on faith (Kafka's LogLoader: only what is past the recovery
    point is recovered)."""

    WHOLE = "whole"
    """Below the recovery point, or everything after a clean shutdown: indexes loaded, only the tail after
    the last index entry walked (without CRC checks: reads check them)."""
    BELOW_RECOVERY_POINT = "below recovery point"
    """Holds the recovery point: index entries below it are kept, every batch from the last of them is
    checked."""
    NONE = "none"
    """Wholly past the recovery point: every batch is checked and indexed."""


def write_clean_shutdown_marker(directory: Path) -> None:
    with open(directory / CLEAN_SHUTDOWN_MARKER, "wb") as handle:
        os.fsync(handle.fileno())
    fsync_directory(directory)


def read_recovery_point(directory: Path) -> int:
    try:
        return int((directory / RECOVERY_POINT_FILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        return 0


def write_recovery_point(directory: Path, offset: int) -> None:
    """Record that everything below ``offset`` is durable, with its indexes (atomic replace)."""
    tmp = directory / (RECOVERY_POINT_FILE + ".tmp")
    with open(tmp, "w") as handle:
        handle.write(f"{offset}\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, directory / RECOVERY_POINT_FILE)
    fsync_directory(directory)


def _load_segment(segment: Segment, trust: Trust, recovery_point: int, interval: int) -> tuple[int, str] | None:
    """Load or rebuild the segment's state as far as ``trust`` allows; returns (position, reason) of a bad batch."""
    if trust is Trust.WHOLE and segment.load_indexes():
        outcome = segment.scan(segment.offset_index.last_position(), verify=False, index_interval_bytes=interval)
        if outcome.problem is None:
            return None
        segment.reset_indexes()
    elif trust is Trust.BELOW_RECOVERY_POINT and segment.load_indexes(below_offset=recovery_point):
        start = segment.offset_index.last_position()
        if start > 0:
            outcome = segment.scan(start, verify=True, index_interval_bytes=interval)
            if outcome.problem is None:
                return None
            segment.reset_indexes()  # a bad batch past the recovery point: let a full walk tell torn from corrupt
    outcome = segment.scan(0, verify=True, index_interval_bytes=interval)
    return None if outcome.problem is None else (outcome.valid_end, outcome.problem)


def _cut_torn_tail(name: str, segments: list[Segment], index: int, position: int, reason: str) -> None:
    segment = segments[index]
    follower = segment.find_valid_batch_after(position)
    if follower is not None:
        raise CorruptLogError(name, segment.log_path, position,
                              f"{reason}; a valid batch follows at position {follower}")
    later = segments[index + 1:]
    if any(other.size for other in later):
        raise CorruptLogError(name, segment.log_path, position, f"{reason}; later segments hold data")
    cut = segment.size - position
    segment.truncate_to(position)
    for other in later:
        other.close()
        other.delete_files()
    del segments[index + 1:]
    _log.warning("truncated torn log tail", partition=name, segment=segment.log_path.name,
                 position=position, bytes_cut=cut, next_offset=segment.next_offset, reason=reason)
