"""Crash-safe replacement of a group of segments by one rewritten segment.

Order on disk: write ``<base>.log.cleaned`` and fsync it; write the manifest naming
the segments it replaces and fsync it; rename ``.cleaned`` to ``.swap`` and fsync the
directory (the commit point); delete the replaced segments; rename ``.swap`` to
``.log``; drop the manifest. ``recover_interrupted_swaps`` run on open rolls back
anything before the commit point and finishes anything after it, so a crash in the
middle of compaction never loses or duplicates data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import structlog

from groupcoord.storage.segment import (
    CLEANED_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX, SWAP_SUFFIX, TIMEINDEX_SUFFIX, TXNINDEX_SUFFIX, fsync_directory,
    parse_segment_filename, segment_filename,
)

MANIFEST_SUFFIX = ".swap-manifest"
_log = structlog.get_logger("groupcoord.storage.swap")


def cleaned_path(directory: Path, base_offset: int) -> Path:
    return directory / segment_filename(base_offset, LOG_SUFFIX + CLEANED_SUFFIX)


def swap_path(directory: Path, base_offset: int) -> Path:
    return directory / segment_filename(base_offset, LOG_SUFFIX + SWAP_SUFFIX)


def manifest_path(directory: Path, base_offset: int) -> Path:
    return directory / segment_filename(base_offset, MANIFEST_SUFFIX)


def write_cleaned(directory: Path, base_offset: int, chunks: Iterable[bytes], mtime_s: float) -> Path:
    path = cleaned_path(directory, base_offset)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.utime(path, (mtime_s, mtime_s))
    return path


def commit_swap(directory: Path, base_offset: int, replaced: list[int]) -> None:
    """Make the cleaned file the durable replacement of ``replaced`` segments."""
    manifest = manifest_path(directory, base_offset)
    with open(manifest, "w") as handle:
        json.dump({"replaced": replaced}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(cleaned_path(directory, base_offset), swap_path(directory, base_offset))
    fsync_directory(directory)


def install_swap(directory: Path, base_offset: int) -> None:
    """Finish a committed swap: drop the replaced segments, promote ``.swap`` to ``.log``."""
    manifest = manifest_path(directory, base_offset)
    replaced = json.loads(manifest.read_text())["replaced"]
    for old in replaced:
        for suffix in (INDEX_SUFFIX, TIMEINDEX_SUFFIX, TXNINDEX_SUFFIX, LOG_SUFFIX):
            try:
                (directory / segment_filename(old, suffix)).unlink()
            except FileNotFoundError:
                pass
    os.rename(swap_path(directory, base_offset), directory / segment_filename(base_offset, LOG_SUFFIX))
    fsync_directory(directory)
    manifest.unlink()
    fsync_directory(directory)


def recover_interrupted_swaps(directory: Path, partition: str) -> None:
    """Finish or roll back an interrupted swap; touches (and fsyncs) the directory only if one was found, so a
    start after a clean stop writes nothing."""
    names = sorted(os.listdir(directory))
    changed = False
    for name in names:
        parsed = parse_segment_filename(name)
        if parsed is None:
            continue
        base_offset, suffix = parsed
        if suffix == LOG_SUFFIX + SWAP_SUFFIX:
            if manifest_path(directory, base_offset).exists():
                install_swap(directory, base_offset)
                changed = True
                _log.warning("finished interrupted segment swap", partition=partition, base_offset=base_offset)
            else:
                (directory / name).unlink()
                changed = True
                _log.warning("dropped swap file without manifest", partition=partition, file=name)
        elif suffix == LOG_SUFFIX + CLEANED_SUFFIX:
            (directory / name).unlink()
            changed = True
            _log.warning("rolled back interrupted compaction", partition=partition, file=name)
    for name in os.listdir(directory):
        parsed = parse_segment_filename(name)
        if parsed is None:
            continue
        base_offset, suffix = parsed
        if suffix == MANIFEST_SUFFIX and not swap_path(directory, base_offset).exists():
            (directory / name).unlink()
            changed = True
        elif suffix.endswith(".tmp") or suffix.endswith(".deleted"):
            (directory / name).unlink()
            changed = True
    if changed:
        fsync_directory(directory)
