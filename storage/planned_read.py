"""One partition's read, planned on the event loop and run on an executor thread (or on the loop from the page cache).

Why a plan: the bounds of a read (the high watermark, the segment it reads, its index position, the size written)
live on the loop, which appends to them, while the file reads must not wait for the disk there.
``PartitionLog.plan_read`` takes the bounds on the loop; ``PlannedRead.run`` reads on a thread and touches nothing
the loop changes but the segment's ``verified_end`` (as every reader does); ``close`` gives the segment back. A fetch
of many partitions plans them all and runs them in one executor job, one hop rather than one per partition: each
hop costs the loop a future, a wake-up and a GIL hand-over, and a worker thread waiting up to the switch interval
for the GIL the busy loop holds (the convoy the issue measured: a fetch of 11 partitions stalled as many times). A
fetch of a few tails, which the page cache holds (they were just written), runs its plans on the loop with
``cached_only`` and hands the executor only what the cache did not hold (``FetchService._read``).

A plan may be run with less than the byte budget it was planned with (a fetch's earlier partitions used some of
it): the region walk's start (``OffsetIndex.walk_start`` of the planned bounds) then may lie past the smaller
budget's end, and ``read_region`` falls back to reading and checking the batches, which answers by the bounds it
is given; a start inside them is one every batch before which fits them, as for the planned budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from groupcoord.protocol.file_region import FileRegion
from groupcoord.storage.segment_reads import NOT_IN_SEGMENT, read_batches, read_region

if TYPE_CHECKING:
    from groupcoord.storage.segment import Segment


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


READ_AGAIN: Final = _Sentinel("READ_AGAIN")
"""What ``run`` answers when the segment it was to read was deleted meanwhile (the cleaner or retention replaced
it): the read is planned again on the loop, from the log's segments then."""
READ_ON: Final = _Sentinel("READ_ON")
"""What ``run`` answers when its segment holds no batch ending at or after the offset (``NOT_IN_SEGMENT``) and a
later segment lies below the bound: the read goes on there (planned again from ``resume_offset``, the later
segment's base offset: every batch there ends at or after it, as after the read's offset), as Kafka's LocalLog.read
goes on to the next segment when LogSegment.read answers null, not when it answers empty (a batch found but too
large for the bytes left)."""


class PlannedRead:
    """The read of ``offset`` below ``high_watermark`` in ``segment`` (the one holding ``offset``, or a later one
    the read went on to): from index position ``start``, within the ``limit`` bytes written, a region's walk
    starting no earlier than ``walk_from``."""

    __slots__ = ("segment", "offset", "start", "limit", "walk_from", "high_watermark", "view", "region",
                 "resume_offset", "_held")

    def __init__(self, segment: Segment, offset: int, start: int, limit: int, walk_from: int, high_watermark: int,
                 view: bool, region: bool, resume_offset: int | None) -> None:
        self.segment = segment
        self.offset = offset
        self.start = start
        self.limit = limit
        self.walk_from = walk_from
        self.high_watermark = high_watermark
        self.view = view
        self.region = region
        self.resume_offset = resume_offset
        segment.begin_read()
        self._held = True

    def run(self, max_bytes: int, min_one: bool,
            cached_only: bool = False) -> bytes | memoryview | FileRegion | _Sentinel:
        """(executor) The whole batches read (``segment_reads``), ``READ_AGAIN`` or ``READ_ON``. At most the
        ``max_bytes`` the plan was made with. A ``CorruptLogError`` is raised for the loop to take the log offline.
        (loop) With ``cached_only``: the same, or ``NotCached`` raised (nothing changed: run it again on a thread)."""
        segment = self.segment
        if segment.deleted:
            return READ_AGAIN
        if self.region:
            data = read_region(segment, self.offset, self.start, self.limit, max_bytes, min_one, self.high_watermark,
                               self.walk_from, cached_only)
        else:
            data = read_batches(segment, self.offset, self.start, self.limit, max_bytes, min_one,
                                self.high_watermark, self.view, cached_only)
        if data is not NOT_IN_SEGMENT:
            return data
        return b"" if self.resume_offset is None else READ_ON

    def close(self) -> None:
        """(loop) The segment given back (one deleted meanwhile closes its file once no read holds it); once."""
        if self._held:
            self._held = False
            self.segment.end_read()
