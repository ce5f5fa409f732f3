"""Finding the segment files of `__consumer_offsets` partitions on disk.

Accepts what an operator naturally points at: a broker data directory (ours or a real Kafka
`log.dirs` entry), one or more `__consumer_offsets-N` directories, or single `.log` files.
Object storage (`s3a://bucket/prefix`, `s3://…`, see `pipeline/object_store.py`) is read the same way:
the objects under the prefix are grouped by their `__consumer_offsets-N` parent.
Kafka leaves temporary files (`.cleaned`, `.swap`, `.deleted`) and `-delete` directories around
while it compacts and deletes; those are not part of the log and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from groupcoord.pipeline.object_store import S3Settings, is_object_store, list_objects
from groupcoord.protocol.names import OFFSETS_TOPIC

_PARTITION_DIR = re.compile(rf"^{OFFSETS_TOPIC}-(\d+)$")
_SEGMENT_FILE = re.compile(r"^(\d{20})\.log$")


@dataclass(frozen=True, order=True)
class SegmentFile:
    """One `.log` segment: the unit of work (one Spark input partition each)."""

    offsets_partition: int
    base_offset: int
    path: str
    size_bytes: int

    @property
    def name(self) -> str:
        return Path(self.path).name


class NoSegmentsError(FileNotFoundError):
    """Raised when a path holds nothing that looks like a `__consumer_offsets` partition."""


def split_paths(value: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Accept one path, a comma-separated list, or a Python list of either."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [part.strip() for item in items for part in str(item).split(",") if part.strip()]


def partition_of_directory(directory: Path) -> int | None:
    match = _PARTITION_DIR.match(directory.name)
    return int(match.group(1)) if match else None


def _segments_in_partition(directory: Path, partition: int) -> list[SegmentFile]:
    found = []
    for entry in directory.iterdir():
        match = _SEGMENT_FILE.match(entry.name)
        if match and entry.is_file():
            found.append(SegmentFile(partition, int(match.group(1)), str(entry.resolve()), entry.stat().st_size))
    return found


def _segments_under(path: Path) -> list[SegmentFile]:
    if path.is_file():
        parent_partition = partition_of_directory(path.parent)
        match = _SEGMENT_FILE.match(path.name)
        if parent_partition is None or match is None:
            raise NoSegmentsError(f"{path} is not a segment file inside a {OFFSETS_TOPIC}-N directory")
        return [SegmentFile(parent_partition, int(match.group(1)), str(path.resolve()), path.stat().st_size)]
    if not path.is_dir():
        raise NoSegmentsError(f"{path} does not exist")
    partition = partition_of_directory(path)
    if partition is not None:
        return _segments_in_partition(path, partition)
    segments: list[SegmentFile] = []
    children = [child for child in path.iterdir() if child.is_dir() and partition_of_directory(child) is not None]
    if not children:
        raise NoSegmentsError(f"{path} holds no {OFFSETS_TOPIC}-N directories")
    for child in children:
        segments.extend(_segments_in_partition(child, partition_of_directory(child)))
    return segments


def _segments_in_store(path: str, settings: S3Settings) -> list[SegmentFile]:
    found = []
    for uri, size in list_objects(path, settings):
        parent, _, name = uri.rpartition("/")
        partition = partition_of_directory(Path(parent.rpartition("/")[2]))
        match = _SEGMENT_FILE.match(name)
        if partition is not None and match:
            found.append(SegmentFile(partition, int(match.group(1)), uri, size))
    if not found:
        raise NoSegmentsError(f"{path} holds no {OFFSETS_TOPIC}-N/<offset>.log objects")
    return found


def discover_segments(paths: str | list[str] | tuple[str, ...], s3: S3Settings | None = None) -> list[SegmentFile]:
    """All segment files under the given paths (local or object storage), in log order, each listed once."""
    unique: dict[str, SegmentFile] = {}
    for raw in split_paths(paths):
        if is_object_store(raw):
            found = _segments_in_store(raw, s3 or S3Settings.resolve())
        else:
            found = _segments_under(Path(raw).expanduser())
        for segment in found:
            unique[segment.path] = segment
    return sorted(unique.values())


# Spark's own file sources pack small files the same way (spark.sql.files.maxPartitionBytes / openCostInBytes).
MAX_SPLIT_BYTES = 64 * 2**20
OPEN_COST_BYTES = 4 * 2**20


def pack_segments(segments: list[SegmentFile], parallelism: int, *, max_split_bytes: int = MAX_SPLIT_BYTES,
                  open_cost_bytes: int = OPEN_COST_BYTES) -> list[list[SegmentFile]]:
    """Segments grouped into Spark input partitions: one task per segment would make a broker's 50 offsets
    partitions (mostly one empty segment each) 50 tasks in every stage of every job, each a Python-worker
    round trip; on a cluster that, not decoding, is the whole cost. Empty files are dropped (they hold no
    batch). Segments are packed largest first into groups of at most `max(open cost, total / (2 x
    parallelism))` bytes (capped at `max_split_bytes`, each file also costing `open_cost_bytes`), so a big
    log still spreads over every core twice over; within a group the segments stay in log order."""
    live = [s for s in segments if s.size_bytes > 0]
    if not live:
        return []
    total = sum(s.size_bytes + open_cost_bytes for s in live)
    target = min(max_split_bytes, max(open_cost_bytes, total // (2 * max(1, parallelism))))
    groups: list[list[SegmentFile]] = []
    current: list[SegmentFile] = []
    current_bytes = 0
    for segment in sorted(live, key=lambda s: (-s.size_bytes, s)):
        cost = segment.size_bytes + open_cost_bytes
        if current and current_bytes + cost > target:
            groups.append(current)
            current, current_bytes = [], 0
        current.append(segment)
        current_bytes += cost
    groups.append(current)
    return [sorted(group) for group in groups]
