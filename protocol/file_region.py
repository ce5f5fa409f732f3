"""A stretch of a file that an answer carries instead of its bytes (a fetch's batches, left in the segment).

The connection hands a region to the socket with ``os.sendfile`` (coordinator/server/file_sender.py), so the
megabytes of a fetch never pass through this process; whoever needs the bytes themselves (a TLS connection, a
test, a transport with a write still buffered) reads them with ``bytes()``.

A region owns a descriptor of its own (a ``dup`` of the segment's): the segment's descriptor belongs to the
storage's file pool, which may close it (eviction, the cleaner or retention deleting the segment) while the
answer still waits its turn on a connection, and a ``dup`` keeps the file, even unlinked, readable until the
region is closed. ``close`` is idempotent, and a region nobody closed closes its descriptor when it is
collected (an answer dropped unsent: a fetch re-read after a wait, a connection gone), so no path leaks it.
"""

from __future__ import annotations

import os


class FileRegion:
    """``length`` bytes of the file open on ``fd`` from ``position``. ``len()`` is the length; ``bytes()`` reads them."""

    __slots__ = ("fd", "position", "length", "next_offset")

    def __init__(self, fd: int, position: int, length: int, next_offset: int = -1) -> None:
        self.fd = fd
        self.position = position
        self.length = length
        self.next_offset = next_offset
        """For a log's region: the offset after its last batch (a read_committed fetch's aborted transactions
        are those begun below it), so that nothing reads the batches again to find it."""

    def __len__(self) -> int:
        return self.length

    def __bytes__(self) -> bytes:
        """The region's bytes, read whole (``pread`` until the length, a short read being an error: the region was
        bounded to whole batches already written)."""
        if self.fd < 0:
            raise ValueError("read of a closed file region")
        parts = []
        position, left = self.position, self.length
        while left:
            chunk = os.pread(self.fd, left, position)
            if not chunk:
                raise OSError(f"file region ends {left} bytes early at position {position}")
            parts.append(chunk)
            position += len(chunk)
            left -= len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self.fd < 0

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FileRegion(fd={self.fd}, position={self.position}, length={self.length})"
