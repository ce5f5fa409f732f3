"""One log segment: the ``.log`` file plus its sparse ``.index`` and ``.timeindex``.

Methods that touch files are synchronous and meant to run on an executor thread; the
in-memory bookkeeping (size, next offset, indexes) is updated by the owning
``PartitionLog`` on the event loop so it is always ahead of the queued file work.
"""

from __future__ import annotations

import errno
import os
import time
from bisect import bisect_left
from pathlib import Path
from typing import Final

from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.record_batch import (
    HEADER_SIZE, MAGIC, MAGIC_OFFSET, MIN_BATCH_LENGTH, BatchHeader, CorruptBatchError,
    parse_header, verify_crc,
)
from groupcoord.storage.errors import NotCached
from groupcoord.storage.file_pool import SHARED_FILES, FileKey, FilePool
from groupcoord.storage.index import OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE, IndexFormatError, OffsetIndex, TimeIndex
from groupcoord.storage.txn_index import AbortedTxn, TransactionIndex

LOG_SUFFIX: Final = ".log"
INDEX_SUFFIX: Final = ".index"
TIMEINDEX_SUFFIX: Final = ".timeindex"
TXNINDEX_SUFFIX: Final = ".txnindex"
CLEANED_SUFFIX: Final = ".cleaned"
SWAP_SUFFIX: Final = ".swap"
DELETED_SUFFIX: Final = ".deleted"
SCAN_CHUNK: Final = 4 * 1024 * 1024
_MAGIC_BYTE: Final = bytes((MAGIC,))
_IOV_MAX: Final = 1024  # the Linux (and POSIX minimum-sized) limit on one pwritev
_WILLNEED: Final = getattr(os, "POSIX_FADV_WILLNEED", None)  # readahead hint (not on macOS)
RWF_NOWAIT: Final = getattr(os, "RWF_NOWAIT", None)
"""preadv's flag for a read that answers EAGAIN rather than wait for the disk (Linux 4.14+); None elsewhere, where
``read_cached`` is never asked for."""
_NOWAIT_REFUSED: Final = frozenset({errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS})
"""What a kernel or filesystem that does not take ``RWF_NOWAIT`` answers: reads from the cache stop being tried."""
_cached_reads = [RWF_NOWAIT is not None]


def cached_reads_available() -> bool:
    """Whether ``Segment.read_cached`` may be tried: the platform has ``RWF_NOWAIT`` and it was never refused."""
    return _cached_reads[0]


def segment_filename(base_offset: int, suffix: str = LOG_SUFFIX) -> str:
    """Kafka names segment files by base offset, zero-padded to 20 digits."""
    return f"{base_offset:020d}{suffix}"


def parse_segment_filename(name: str) -> tuple[int, str] | None:
    stem, dot, suffix = name.partition(".")
    if not dot or len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem), "." + suffix


@frozen_dataclass
class ScanOutcome:
    """Where a forward walk of the ``.log`` stopped and, if early, why."""

    valid_end: int
    problem: str | None


RECENT_INDEX_ENTRIES: Final = 4
"""How far back ``Segment.recent_batch_position`` knows batches: from this many offset index entries back."""


class Segment:
    def __init__(self, directory: Path, base_offset: int, size: int, files: FilePool = SHARED_FILES) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.files = files
        """Where this segment borrows its ``.log`` descriptor from: open files are a bounded resource."""
        self._file = FileKey(directory / segment_filename(base_offset, LOG_SUFFIX))
        self.size = size
        self.verified_end = 0
        """Every batch below this byte position has passed its CRC-32C check since the segment was opened (by
        recovery, by a replay or fetch that read it, or because this process appended it)."""
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = base_offset
        self.rolling_timestamp: int | None = None
        self.bytes_since_index = 0
        self.offset_index = OffsetIndex(base_offset)
        self.time_index = TimeIndex(base_offset)
        self.txn_index = TransactionIndex(base_offset)
        """The aborted transactions whose ABORT marker lies in this segment (``.txnindex``)."""
        self.recent_last_offsets: list[int] = []
        self.recent_positions: list[int] = []
        """The last offset and position of every batch tracked since about ``RECENT_INDEX_ENTRIES`` index entries
        ago (``recent_batch_position``): consecutive batches, the segment's newest, in memory only."""
        self.indexes_dirty = False
        self.deleted = False
        self._readers = 0
        self._closed = False

    # ---- naming -------------------------------------------------------------------
    @property
    def log_path(self) -> Path:
        return self.directory / segment_filename(self.base_offset, LOG_SUFFIX)

    @property
    def index_path(self) -> Path:
        return self.directory / segment_filename(self.base_offset, INDEX_SUFFIX)

    @property
    def timeindex_path(self) -> Path:
        return self.directory / segment_filename(self.base_offset, TIMEINDEX_SUFFIX)

    @property
    def txnindex_path(self) -> Path:
        return self.directory / segment_filename(self.base_offset, TXNINDEX_SUFFIX)

    def __repr__(self) -> str:
        return f"Segment({self.log_path.name}, size={self.size}, next_offset={self.next_offset})"

    # ---- lifecycle (executor) -------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, base_offset: int, files: FilePool = SHARED_FILES) -> Segment:
        path = directory / segment_filename(base_offset)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        segment = cls(directory, base_offset, 0, files)
        files.adopt(segment._file, fd)
        segment.rolling_timestamp = int(time.time() * 1000)
        return segment

    @classmethod
    def open_existing(cls, directory: Path, base_offset: int, files: FilePool = SHARED_FILES) -> Segment:
        """A segment whose file is opened only when first read or written (see ``FilePool``)."""
        path = directory / segment_filename(base_offset)
        return cls(directory, base_offset, os.stat(path).st_size, files)

    def last_modified_ms(self) -> int:
        return int(os.stat(self.log_path).st_mtime * 1000)

    def write_at(self, position: int, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        with self.files.borrow(self._file) as fd:
            while view:
                written = os.pwrite(fd, view, position)
                view = view[written:]
                position += written

    def write_parts_at(self, position: int, buffers: list[bytearray | memoryview]) -> None:
        """``write_at`` of the buffers back to back, with pwritev (in IOV_MAX slices) where the platform has it."""
        pwritev = getattr(os, "pwritev", None)
        if pwritev is None:
            self.write_at(position, b"".join(buffers))
            return
        views = [memoryview(b) for b in buffers if len(b)]
        with self.files.borrow(self._file) as fd:
            while views:
                chunk = views[:_IOV_MAX]
                written = pwritev(fd, chunk, position)
                position += written
                while written:  # drop what went out, keep a partly written buffer's rest
                    if written >= len(views[0]):
                        written -= len(views[0])
                        views.pop(0)
                    else:
                        views[0] = views[0][written:]
                        written = 0

    def read(self, position: int, size: int) -> bytes:
        with self.files.borrow(self._file) as fd:
            return os.pread(fd, size, position)

    def read_cached(self, position: int, size: int) -> bytes:
        """``read``'s answer when the page cache holds the bytes, else ``NotCached``: a read the event loop may do
        itself, since it never waits for the disk (preadv with ``RWF_NOWAIT``; only where it exists). A short
        answer that stops before the file's end is a page not cached (the kernel gives what it has up to it);
        one at the end is the file's end, as for ``read``."""
        buffer = bytearray(size)
        with self.files.borrow(self._file) as fd:
            try:
                got = os.preadv(fd, (buffer,), position, RWF_NOWAIT)
            except BlockingIOError:
                raise NotCached(f"{self.log_path.name} at {position}") from None
            except OSError as exc:
                if exc.errno not in _NOWAIT_REFUSED:
                    raise
                _cached_reads[0] = False  # (this kernel or filesystem does not take the flag: never again)
                raise NotCached(f"{self.log_path.name}: RWF_NOWAIT refused ({exc})") from None
            if got < size:
                if position + got < os.fstat(fd).st_size:  # (the file may have grown meanwhile: read again)
                    raise NotCached(f"{self.log_path.name} at {position + got}")
                del buffer[got:]
        return bytes(buffer)

    def region(self, position: int, size: int, next_offset: int = -1) -> FileRegion:
        """``size`` bytes from ``position`` as a region with a descriptor of its own (see protocol/file_region.py:
        the pool's may be closed before the region is sent)."""
        with self.files.borrow(self._file) as fd:
            region = FileRegion(os.dup(fd), position, size, next_offset)
        if _WILLNEED is not None:
            # The region is sent by sendfile on the event loop, which would wait there for a disk read of bytes
            # not in the page cache (a consumer catching up on old segments) while the loop also serves the
            # group coordinator: Kafka's network threads block so (KAFKA-7504). Asked here, on the reader's
            # executor thread, the kernel starts reading them now; for cached bytes it costs ~15 us per MB.
            os.posix_fadvise(region.fd, position, size, _WILLNEED)
        return region

    def flush(self) -> None:
        """Appended bytes durable: fdatasync where the platform has it. It writes the data and the
        metadata needed to read it back (the file's size) but not its times, which is all a log
        append needs, and costs about half an fsync on ext4 (1.1 vs 2.0 ms measured here): it is the
        latency of every acknowledged commit and produce under fsync=batch. The directory entry of a
        new segment is made durable separately (fsync_directory)."""
        with self.files.borrow(self._file) as fd:
            _datasync(fd)

    def truncate_to(self, position: int) -> None:
        with self.files.borrow(self._file) as fd:
            os.ftruncate(fd, position)
            os.fsync(fd)
        self.size = position
        self.verified_end = min(self.verified_end, position)
        cut = bisect_left(self.recent_positions, position)
        del self.recent_last_offsets[cut:]
        del self.recent_positions[cut:]

    def write_indexes(self) -> None:
        """Persist the indexes (Kafka trims them to their real size on roll/close)."""
        self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        _write_file(self.index_path, self.offset_index.to_bytes())
        _write_file(self.timeindex_path, self.time_index.to_bytes())
        self.indexes_dirty = False

    def index_snapshot(self) -> tuple[bytes, bytes]:
        """The indexes as file contents, taken on the event loop so they describe only bytes written so far."""
        self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        return self.offset_index.to_bytes(), self.time_index.to_bytes()

    def write_index_snapshot(self, snapshot: tuple[bytes, bytes]) -> None:
        """Persist a snapshot of the active segment's indexes (at a recovery-point checkpoint)."""
        _write_file(self.index_path, snapshot[0])
        _write_file(self.timeindex_path, snapshot[1])

    def load_indexes(self, below_offset: int | None = None) -> bool:
        """Load index files written at the last roll, clean close or checkpoint; False means rebuild them.

        With ``below_offset`` (the recovery point inside this segment) entries at or past it are dropped:
        the bytes they point at were not known durable.
        """
        try:
            offset_index = OffsetIndex.from_bytes(self.base_offset, self.index_path.read_bytes(), self.size)
            time_index = TimeIndex.from_bytes(self.base_offset, self.timeindex_path.read_bytes())
        except (OSError, IndexFormatError):
            return False
        if below_offset is not None:
            offset_index.truncate_from(below_offset)
            time_index.truncate_from(below_offset)
        self.offset_index = offset_index
        self.time_index = time_index
        if len(time_index):
            self.max_timestamp = time_index.max_timestamp()
            self.offset_of_max_timestamp = self.base_offset + time_index.relative_offsets[-1]
        return True

    def load_txn_index(self) -> bool:
        """Load the ``.txnindex`` if there is one, dropping entries whose marker is past the segment's end (a
        torn tail was cut); rewrites the file when it dropped any. False when the file was unreadable: it is
        then rebuilt from the markers by the producer-state replay (``add_aborted_txn``)."""
        try:
            data = self.txnindex_path.read_bytes()
        except FileNotFoundError:
            self.txn_index = TransactionIndex(self.base_offset)
            return True
        try:
            self.txn_index = TransactionIndex.from_bytes(self.base_offset, data)
        except IndexFormatError:
            self.txn_index = TransactionIndex(self.base_offset)
            self.write_txn_index()
            return False
        if self.txn_index.truncate_from(self.next_offset):
            self.write_txn_index()
        return True

    def write_txn_index(self, fsync: bool = True) -> None:
        """Persist the whole ``.txnindex`` (small: one 34-byte entry per aborted transaction); none is kept
        for a segment without aborts."""
        if not self.txn_index.entries:
            self.txnindex_path.unlink(missing_ok=True)
            return
        _write_file(self.txnindex_path, self.txn_index.to_bytes(), fsync=fsync)

    def add_aborted_txn(self, entry: AbortedTxn) -> bool:
        """Record an aborted transaction in memory (event loop); the caller persists it with ``write_txn_index``."""
        return self.txn_index.append(entry)

    def reset_indexes(self) -> None:
        self.offset_index = OffsetIndex(self.base_offset)
        self.time_index = TimeIndex(self.base_offset)
        self.next_offset = self.base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = self.base_offset
        self.bytes_since_index = 0
        self.rolling_timestamp = None
        self.recent_last_offsets = []
        self.recent_positions = []
        self.indexes_dirty = True

    # ---- bookkeeping (loop or executor, never both at once) --------------------------------
    def track_batch(self, position: int, header: BatchHeader, index_interval_bytes: int) -> None:
        """Advance offsets, timestamps and sparse index entries for a batch at ``position``."""
        last_offset = header.base_offset + header.last_offset_delta
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp = header.max_timestamp
            self.offset_of_max_timestamp = last_offset
        if self.rolling_timestamp is None and position == 0 and header.max_timestamp >= 0:
            self.rolling_timestamp = header.max_timestamp
        if self.bytes_since_index > index_interval_bytes:
            self.offset_index.append(last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_index = 0
            self._forget_older_batches()
        self.bytes_since_index += header.batch_length + 12
        self.next_offset = last_offset + 1
        self.indexes_dirty = True
        self.recent_last_offsets.append(last_offset)
        self.recent_positions.append(position)

    def _forget_older_batches(self) -> None:
        """Keep the recent batches from the ``RECENT_INDEX_ENTRIES``-th last index entry on: a few index
        intervals of the log, whatever the batches' size."""
        positions = self.offset_index.positions
        if len(positions) >= RECENT_INDEX_ENTRIES:
            cut = bisect_left(self.recent_positions, positions[-RECENT_INDEX_ENTRIES])
            if cut:
                del self.recent_last_offsets[:cut]
                del self.recent_positions[:cut]

    def forget_recent_batches(self) -> None:
        """A segment no longer appended to (rolled, cleaned, recovered behind the active one) keeps no recent
        batches: its reads are rarely at its end, and thousands of such segments would hold them for nothing."""
        self.recent_last_offsets = []
        self.recent_positions = []

    def recent_batch_position(self, offset: int) -> int | None:
        """The position of the batch holding ``offset`` (the first whose last offset is at or past it) when it is
        one of the recent batches after the first, else None (ask the offset index).

        Why: a consumer at the log end fetches from the last few batches, which the sparse offset index (one
        entry per ``index.interval.bytes``) leaves to a walk of up to an interval of batch headers; small batches
        made that walk tens of headers per partition fetched. After the first recent batch, because the
        recent batches are consecutive: one before it ending below ``offset`` means every earlier one does."""
        lasts = self.recent_last_offsets
        at = bisect_left(lasts, offset)
        return self.recent_positions[at] if 0 < at < len(lasts) else None

    def index_full(self, index_bytes_limit: int) -> bool:
        """Whether one more entry would take either index past ``segment.index.bytes`` (the entries counted here,
        not through the indexes' ``size_bytes``: every append asks)."""
        return (len(self.offset_index.relative_offsets) * OFFSET_ENTRY_SIZE + OFFSET_ENTRY_SIZE > index_bytes_limit
                or len(self.time_index.timestamps) * TIME_ENTRY_SIZE + TIME_ENTRY_SIZE > index_bytes_limit)

    # ---- validation walk (executor) ---------------------------------------------------
    def scan(self, start: int, *, verify: bool, index_interval_bytes: int) -> ScanOutcome:
        """Walk batches from ``start`` to the end of the file, tracking each valid one.

        Stops at the first batch that is cut short, has the wrong magic or length, fails
        its CRC (when ``verify``), or goes back in offsets.
        """
        pos = start
        end = self.size
        chunk = b""
        chunk_start = pos
        while pos < end:
            if end - pos < HEADER_SIZE:
                return ScanOutcome(pos, f"{end - pos} trailing bytes are too few for a batch header")
            rel = pos - chunk_start
            if rel < 0 or rel + HEADER_SIZE > len(chunk):
                chunk, chunk_start, rel = self.read(pos, SCAN_CHUNK), pos, 0
            try:
                header = parse_header(chunk, rel)
            except CorruptBatchError as exc:
                return ScanOutcome(pos, str(exc))
            if pos + header.size > end:
                return ScanOutcome(pos, f"batch of {header.size} bytes is cut short at {end - pos} bytes")
            if rel + header.size > len(chunk):
                chunk, chunk_start, rel = self.read(pos, max(SCAN_CHUNK, header.size)), pos, 0
            if verify and not verify_crc(chunk, rel):
                return ScanOutcome(pos, f"CRC mismatch in batch with base offset {header.base_offset}")
            if header.base_offset < self.next_offset or header.last_offset_delta < 0:
                return ScanOutcome(pos, f"batch base offset {header.base_offset} goes back before "
                                        f"{self.next_offset}")
            self.track_batch(pos, header, index_interval_bytes)
            if verify and pos == self.verified_end:
                self.verified_end = pos + header.size
            pos += header.size
        return ScanOutcome(pos, None)

    def find_valid_batch_after(self, start: int) -> int | None:
        """Position of any whole, CRC-valid batch beginning after ``start``, else None.

        Used to tell a torn tail (nothing valid follows: safe to cut) from corruption in
        the middle (valid data follows: cutting would lose it).
        """
        end = self.size
        base = start + 1
        while base + HEADER_SIZE <= end:
            chunk = self.read(base, SCAN_CHUNK + HEADER_SIZE)
            hit = chunk.find(_MAGIC_BYTE, MAGIC_OFFSET)
            while hit != -1 and hit - MAGIC_OFFSET < SCAN_CHUNK:
                candidate = base + hit - MAGIC_OFFSET
                if self._is_valid_batch_at(candidate, chunk, hit - MAGIC_OFFSET, end):
                    return candidate
                hit = chunk.find(_MAGIC_BYTE, hit + 1)
            base += SCAN_CHUNK
        return None

    def _is_valid_batch_at(self, position: int, chunk: bytes, rel: int, end: int) -> bool:
        if rel + HEADER_SIZE > len(chunk):
            return False
        length = int.from_bytes(chunk[rel + 8:rel + 12], "big", signed=True)
        if length < MIN_BATCH_LENGTH or position + 12 + length > end:
            return False
        return verify_crc(self.read(position, 12 + length))

    # ---- shutdown and deletion -----------------------------------------------------------
    def begin_read(self) -> None:
        self._readers += 1

    def end_read(self) -> None:
        self._readers -= 1
        if self.deleted and self._readers == 0:
            self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.files.forget(self._file)

    def mark_deleted(self) -> None:
        """Stop new use; the descriptor closes once in-flight reads finish."""
        self.deleted = True
        if self._readers == 0:
            self.close()

    def delete_files(self) -> None:
        for path in (self.log_path, self.index_path, self.timeindex_path, self.txnindex_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def _write_file(path: Path, data: bytes, fsync: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk must not also leave half-written files behind
        raise


_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
