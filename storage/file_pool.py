"""Open segment files as a bounded resource: an LRU of descriptors with a cap.

A broker with thousands of partitions cannot keep every ``.log`` open: at ``ulimit -n 1024`` it runs out
of descriptors, cannot accept connections or create a topic, and then cannot even start again. Segments
therefore do not own a descriptor; they borrow one from a ``FilePool`` for the length of one file
operation. The pool opens the file on first use and, once more than ``max_open`` files are open, closes
the least recently used ones that nobody is borrowing. A descriptor in use is never closed under its
borrower (the cap is soft while every open file is borrowed, which the executor's thread count bounds).

Each segment has its own key, not its path: after a segment is deleted and a new one is created under the
same name (a full truncation), the old descriptor, which points at the unlinked file, is never reused.
"""

from __future__ import annotations

import errno
import os
import resource
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from groupcoord.protocol.frozen import frozen_dataclass

MIN_OPEN_FILES: Final = 16
AUTO: Final = 0
"""``log.max.open.files = 0`` means: a quarter of the process's soft ``RLIMIT_NOFILE``, leaving the rest to
client connections, index rewrites and the directory fsyncs of an executor."""


def default_max_open_files() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(MIN_OPEN_FILES, min(4096, soft // 4))


def resolve_max_open_files(configured: int) -> int:
    return default_max_open_files() if configured <= AUTO else max(MIN_OPEN_FILES, configured)


class FileKey:
    """Identity of one segment's file in the pool (and the path to open it by)."""

    __slots__ = ("path",)

    def __init__(self, path: os.PathLike | str) -> None:
        self.path = os.fspath(path)

    def __repr__(self) -> str:
        return f"FileKey({self.path})"


@dataclass(slots=True)
class _Entry:
    """One open descriptor of the pool: how many readers or writers hold it, and whether it closes when they are
    done."""
    fd: int
    borrowers: int = 0
    doomed: bool = field(default=False)
    """Forgotten while borrowed: closed when the last borrower returns it."""


@frozen_dataclass
class FilePoolStats:
    """What the pool holds and has done: open descriptors, the cap, opens and evictions (for metrics)."""
    open_files: int
    max_open: int
    opens: int
    evictions: int


class FilePool:
    def __init__(self, max_open: int = AUTO) -> None:
        self.max_open = resolve_max_open_files(max_open)
        self._entries: OrderedDict[FileKey, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._opens = 0
        self._evictions = 0

    def stats(self) -> FilePoolStats:
        with self._lock:
            return FilePoolStats(len(self._entries), self.max_open, self._opens, self._evictions)

    @contextmanager
    def borrow(self, key: FileKey) -> Iterator[int]:
        """A descriptor of ``key``'s file (read/write), open for the duration of the ``with`` block."""
        fd = self._acquire(key)
        try:
            yield fd
        finally:
            self._release(key)

    def adopt(self, key: FileKey, fd: int) -> None:
        """Take ownership of a descriptor the caller just opened (a newly created segment)."""
        with self._lock:
            self._entries[key] = _Entry(fd)
            self._opens += 1
            self._evict_locked()

    def forget(self, key: FileKey) -> None:
        """Close ``key``'s descriptor (now, or when its last borrower returns it)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return
            if entry.borrowers:
                entry.doomed = True
                return
            del self._entries[key]
        os.close(entry.fd)

    def _acquire(self, key: FileKey) -> int:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._check_not_doomed(key, entry)
                entry.borrowers += 1
                self._entries.move_to_end(key)
                return entry.fd
        fd = os.open(key.path, os.O_RDWR)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:  # another thread opened it meanwhile: use theirs
                if entry.doomed:
                    os.close(fd)
                    self._check_not_doomed(key, entry)
                entry.borrowers += 1
                self._entries.move_to_end(key)
                duplicate = fd
            else:
                duplicate = None
                entry = _Entry(fd, borrowers=1)
                self._entries[key] = entry
                self._opens += 1
                self._evict_locked()
        if duplicate is not None:
            os.close(duplicate)
        return entry.fd

    @staticmethod
    def _check_not_doomed(key: FileKey, entry: _Entry) -> None:
        if entry.doomed:
            raise OSError(errno.EBADF, "segment file was closed", key.path)

    def _release(self, key: FileKey) -> None:
        close_fd = None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return
            entry.borrowers -= 1
            if entry.borrowers == 0 and entry.doomed:
                del self._entries[key]
                close_fd = entry.fd
            else:
                self._evict_locked()
        if close_fd is not None:
            os.close(close_fd)

    def _evict_locked(self) -> None:
        if len(self._entries) <= self.max_open:
            return
        for key in list(self._entries):
            if len(self._entries) <= self.max_open:
                return
            entry = self._entries[key]
            if entry.borrowers == 0:
                del self._entries[key]
                os.close(entry.fd)
                self._evictions += 1


SHARED_FILES: Final = FilePool()
"""The pool of segments opened without a LogManager (tests, offline tools)."""
