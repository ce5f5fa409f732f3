"""Opening a partition directory after a clean or an unclean shutdown.

After a clean close (marker present) the saved indexes are trusted and only the tail
after the last index entry is walked. After an unclean one, segments wholly below the
recovery point (the base of the active segment at the last durable roll: everything
before it was fsynced and its indexes written) are treated the same way, and every
batch from the recovery point on is checked (length, magic 2, CRC-32C, offsets moving
forward) with its indexes rebuilt. A bad batch with nothing
valid after it is a torn tail and is cut (and logged); a bad batch followed by valid
data is corruption, and opening fails with ``CorruptLogError`` rather than drop records.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

import structlog

from groupcoord.storage.config import LogConfig
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.segment import LOG_SUFFIX, Segment, fsync_directory, parse_segment_filename
from groupcoord.storage.swap import recover_interrupted_swaps

CLEAN_SHUTDOWN_MARKER: Final = ".kafka_cleanshutdown"
RECOVERY_POINT_FILE: Final = "recovery-point-offset"

_log = structlog.get_logger("groupcoord.storage.recovery")


def recover_segments(directory: Path, name: str, config: LogConfig) -> list[Segment]:
    """Open, validate and (if needed) repair every segment; always returns at least one."""
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / CLEAN_SHUTDOWN_MARKER
    clean = marker.exists()
    recover_interrupted_swaps(directory, name)
    bases = sorted(parsed[0] for entry in os.listdir(directory)
                   if (parsed := parse_segment_filename(entry)) and parsed[1] == LOG_SUFFIX)
    segments = [Segment.open_existing(directory, base) for base in bases]
    recovery_point = read_recovery_point(directory)
    try:
        index = 0
        while index < len(segments):
            segment = segments[index]
            durable = clean or (index + 1 < len(segments) and segments[index + 1].base_offset <= recovery_point)
            problem = _load_segment(segment, durable, config.index_interval_bytes)
            if problem is not None:
                _cut_torn_tail(name, segments, index, *problem)
            if segment.rolling_timestamp is None:
                segment.rolling_timestamp = segment.last_modified_ms()
            index += 1
        if not segments:
            segments.append(Segment.create(directory, 0))
            fsync_directory(directory)
        if clean:
            marker.unlink()  # from here on a crash counts as unclean
            fsync_directory(directory)
    except BaseException:
        for segment in segments:
            segment.close()
        raise
    return segments


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


def _load_segment(segment: Segment, durable: bool, interval: int) -> tuple[int, str] | None:
    """Load (durable) or rebuild the segment's state; returns (position, reason) of a bad batch."""
    if durable and segment.load_indexes():
        outcome = segment.scan(segment.offset_index.last_position(), verify=False, index_interval_bytes=interval)
        if outcome.problem is None:
            return None
        segment.reset_indexes()
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
