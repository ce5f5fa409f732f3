"""A read planned on the loop and run on a thread (storage/planned_read.py) answers as the read of old: on into the
next segment when its own holds nothing for the offset, planned again when its segment was deleted meanwhile, and
its segment held until the plan is closed. Run on the loop from the page cache (``cached_only``), it answers as on a
thread, or raises ``NotCached`` for a thread to run it."""

from __future__ import annotations

import errno
import mmap
import os
from unittest import mock

import pytest

from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.record_batch import encode_batch, parse_header, set_base_offset
from groupcoord.storage import segment_reads
from groupcoord.storage.errors import NotCached
from groupcoord.storage.planned_read import READ_AGAIN, READ_ON, PlannedRead
from groupcoord.storage.recovery import CLEAN_SHUTDOWN_MARKER
from groupcoord.storage.segment import Segment
from tests.storage.conftest import small_config
from tests.support.page_cache import needs_nowait


def batch_at(base_offset: int, records: int = 3) -> bytes:
    data = bytearray(encode_batch([(b"k", b"v" * 40, ()) for _ in range(records)], base_timestamp=1000))
    set_base_offset(data, 0, base_offset)
    return bytes(data)


async def test_a_read_goes_on_into_the_next_segment_when_its_own_holds_nothing_for_the_offset(open_log):
    """Offsets 3-9 are missing (as after compaction): the segment holding offset 5 by its base has no batch for it,
    the read goes on into the next segment and answers its first batch."""
    log = await open_log(small_config(segment_bytes=len(batch_at(0)) + 1))  # each batch a segment of its own
    await log.append(batch_at(0), assign_offsets=False)
    await log.append(batch_at(10), assign_offsets=False)
    assert [segment.base_offset for segment in log.segments] == [0, 10]
    planned = log.plan_read(5, 1 << 20, log.read_bound())
    assert planned.resume_offset == 10
    try:
        assert planned.run(1 << 20, True) is READ_ON
    finally:
        planned.close()
    for region in (False, True):
        got = await log.read(5, 1 << 20, region=region)
        assert bytes(got) == batch_at(10)
        if type(got) is FileRegion:
            got.close()


async def test_a_read_whose_segment_was_deleted_meanwhile_is_planned_again(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(batch_at(0))
    expected = bytes(await log.read(0, 1 << 20))
    real = PlannedRead.run
    runs = []

    def deleted_once(self, max_bytes, min_one, cached_only=False):
        runs.append(self)
        return READ_AGAIN if len(runs) == 1 else real(self, max_bytes, min_one, cached_only)

    with mock.patch.object(PlannedRead, "run", deleted_once):
        assert bytes(await log.read(0, 1 << 20)) == expected
    assert len(runs) == 2 and runs[0] is not runs[1]


async def test_a_plan_holds_its_segment_until_closed(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(batch_at(0))
    segment = log.segments[0]
    planned = log.plan_read(0, 1 << 20, log.read_bound())
    segment.mark_deleted()
    assert not segment._closed  # a read holds it: its descriptor stays open
    assert planned.run(1 << 20, True) is READ_AGAIN
    planned.close()
    planned.close()  # once
    assert segment._closed


async def test_a_batch_too_large_for_the_bytes_left_answers_empty_rather_than_the_next_segments_batches(open_log):
    """Kafka's LogSegment.read answers empty, not null, when the batch holding the offset is found but does not fit
    (no min_one): the log does not go on to the next segment, whose batches would skip the offsets asked for."""
    log = await open_log(small_config(segment_bytes=len(batch_at(0, 20)) + 1))  # each batch a segment of its own
    await log.append(batch_at(0, 20))
    await log.append(batch_at(0, 1))
    assert [segment.base_offset for segment in log.segments] == [0, 20]
    for region in (False, True):
        assert bytes(await log.read(0, 200, min_one=False, region=region)) == b""
        whole = bytes(await log.read(0, 200, min_one=True, region=region))
        assert len(whole) == len(batch_at(0, 20)) and parse_header(whole).base_offset == 0


def run_both_ways(log, offset: int, max_bytes: int, region: bool) -> tuple[bytes, bytes]:
    """One plan run from the page cache, another as on a thread: their answers' bytes."""
    answers = []
    for cached_only in (True, False):
        planned = log.plan_read(offset, max_bytes, log.read_bound(), view=True, region=region)
        try:
            got = planned.run(max_bytes, True, cached_only)
            answers.append(bytes(got))
            if type(got) is FileRegion:
                got.close()
        finally:
            planned.close()
    return answers[0], answers[1]


@needs_nowait
@pytest.mark.parametrize("region_min", [0, 1 << 16], ids=["as-a-region", "read"])
@pytest.mark.parametrize("region", [False, True], ids=["bytes", "region-listener"])
async def test_a_plan_run_from_the_page_cache_answers_as_on_a_thread(open_log, region, region_min):
    log = await open_log(small_config(segment_bytes=1 << 20))
    for base in range(0, 60, 3):
        await log.append(batch_at(base))
    with mock.patch.object(segment_reads, "REGION_MIN", region_min):
        for offset, max_bytes in ((0, 1 << 20), (31, 500), (58, 1), (12, 0)):
            from_cache, on_a_thread = run_both_ways(log, offset, max_bytes, region)
            assert from_cache == on_a_thread and from_cache


async def test_a_plan_meeting_bytes_not_cached_raises_not_cached_and_runs_as_before_on_a_thread(open_log):
    """The page cache's answer stood in for (the kernel's EAGAIN): the attempt changes nothing the thread's run
    then reads by."""
    log = await open_log(small_config(segment_bytes=1 << 20))
    for base in range(0, 30, 3):
        await log.append(batch_at(base))
    expected = bytes(await log.read(0, 1 << 20))
    planned = log.plan_read(0, 1 << 20, log.read_bound(), view=True)
    try:
        with mock.patch.object(os, "preadv", side_effect=BlockingIOError(11, "EAGAIN")), pytest.raises(NotCached):
            planned.run(1 << 20, True, cached_only=True)
        assert bytes(planned.run(1 << 20, True)) == expected
    finally:
        planned.close()


async def test_a_kernel_refusing_the_flag_makes_the_read_not_cached_and_stops_the_cached_reads(open_log, monkeypatch):
    """A kernel before 4.14, or a filesystem without the flag, answers EOPNOTSUPP: not a failed read (the fetch
    reads on a thread), and the loop stops trying."""
    from groupcoord.storage import segment as segment_module

    monkeypatch.setattr(segment_module, "_cached_reads", [True])
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(batch_at(0))
    with mock.patch.object(os, "preadv", side_effect=OSError(errno.EOPNOTSUPP, "not supported")), \
            pytest.raises(NotCached):
        log.segments[0].read_cached(0, 100)
    assert not segment_module.cached_reads_available()


@needs_nowait
def test_a_read_of_bytes_outside_the_page_cache_is_not_cached_or_exact(tmp_path):
    """The kernel's side: segment files written with O_DIRECT (around the page cache, which then holds none of them)
    are read by ``read_cached`` through the real ``preadv(RWF_NOWAIT)``: each answers NotCached or exactly its own
    bytes, never other bytes or an error; ``read`` waits and answers their bytes.

    Not asserted: that NotCached comes at all. RWF_NOWAIT promises no blocking, not no I/O: the kernel may start a
    readahead without blocking, and on a fast (virtual) disk it can finish before the page is looked at. Seen on
    Linux 6.18, ext4 on virtio: 2 % to 57 % of such files read from the cache anyway on a quiet machine, all 20 of 20
    in a CI run under load. The kernel's EAGAIN becoming NotCached is checked with it stood in for
    (``test_a_plan_meeting_bytes_not_cached_raises_not_cached_and_runs_as_before_on_a_thread``)."""
    files = 20
    data = batch_at(0)
    block = mmap.mmap(-1, 4096)  # (O_DIRECT wants a buffer and a length aligned to the device's blocks)
    block.write(data)
    for n in range(files):
        directory = tmp_path / f"orders-{n}"
        directory.mkdir()
        try:
            fd = os.open(directory / "00000000000000000000.log", os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            pytest.skip(f"needs a file written past the page cache with O_DIRECT, which the filesystem of {tmp_path} "
                        "refuses (EINVAL, as tmpfs before Linux 6.6 does); run with --basetemp on a disk-backed "
                        "filesystem to include it")
        try:
            os.write(fd, block)
        finally:
            os.close(fd)
        segment = Segment.open_existing(directory, 0)
        try:
            assert segment.read_cached(0, len(data)) == data  # (the kernel's readahead was quicker)
        except NotCached:
            pass
        assert segment.read(0, len(data)) == data


@needs_nowait
async def test_reading_cached_bytes_up_to_the_files_end_answers_short_as_read_does(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(batch_at(0))
    segment = log.segments[0]
    size = os.stat(segment.log_path).st_size
    tail = segment.read(size - 10, 4096)
    assert len(tail) == 10 and segment.read_cached(size - 10, 4096) == tail
    assert segment.read_cached(size, 4096) == b""


async def test_a_read_near_the_log_end_starts_at_its_batch_not_at_the_index_entry_before_it(open_log):
    """The recent batches (Segment.recent_batch_position) put a tail read's start at the batch holding its offset,
    so it reads one header there instead of walking an index interval of small batches; every offset still reads
    from the batch that holds it, the recent batches stay a few index intervals long, and a truncation drops those
    past it."""
    log = await open_log(small_config(segment_bytes=1 << 20, index_interval_bytes=256))
    sizes = [1 + (i % 3) for i in range(120)]  # batches of 1-3 records, each ~70-190 bytes: several per interval
    for records in sizes:
        await log.append(batch_at(0, records))
    segment = log.segments[0]
    positions, pos = {}, 0
    data = bytes(await log.read(0, 1 << 30))
    while pos < len(data):
        header = parse_header(data, pos)
        for offset in range(header.base_offset, header.base_offset + header.last_offset_delta + 1):
            positions[offset] = pos
        pos += header.size
    end = log.log_end_offset
    known = [offset for offset in range(end) if segment.recent_batch_position(offset) is not None]
    assert known and known[-1] == end - 1  # the newest batches are known
    assert len(segment.recent_positions) < 60  # about four intervals of 256 bytes, not all 120 batches
    for offset in range(end):
        got = segment.recent_batch_position(offset)
        assert got is None or got == positions[offset]
        planned = log.plan_read(offset, 1 << 20, log.read_bound())
        try:
            answer = bytes(planned.run(1 << 20, True))
        finally:
            planned.close()
        first = parse_header(answer)
        assert first.base_offset <= offset <= first.base_offset + first.last_offset_delta
        assert answer == data[positions[offset]:]

    headers_read = []
    real = segment_reads.Window.header

    def counted(self, pos):
        headers_read.append(pos)
        return real(self, pos)

    with mock.patch.object(segment_reads.Window, "header", counted):
        planned = log.plan_read(end - 1, 1 << 20, log.read_bound())
        try:
            planned.run(1 << 20, True)
        finally:
            planned.close()
    assert headers_read == [positions[end - 1]]  # located at once (the index entry before it is further back)

    last_batch = positions[end - 1]
    segment.truncate_to(last_batch)
    assert segment.recent_positions[-1] < last_batch
    assert segment.recent_batch_position(end - 1) is None


async def test_only_the_active_segment_keeps_its_recent_batches(open_log, log_dir):
    """A rolled segment forgets them at the roll, and a log reopened after an unclean stop (whose recovery walks
    its segments' batches) keeps them for its last segment only: the earlier ones are read from their indexes, as
    they were before the recent batches."""
    config = small_config(segment_bytes=6 * len(batch_at(0)), index_interval_bytes=256)
    log = await open_log(config)
    for _ in range(20):
        await log.append(batch_at(0))
    assert len(log.segments) > 2
    assert [bool(s.recent_positions) for s in log.segments] == [False] * (len(log.segments) - 1) + [True]
    expected = bytes(await log.read(0, 1 << 30))
    await log.close()
    (log_dir / CLEAN_SHUTDOWN_MARKER).unlink()  # as after a crash: recovery walks every segment
    reopened = await open_log(config)
    assert [bool(s.recent_positions) for s in reopened.segments] == [False] * (len(reopened.segments) - 1) + [True]
    assert bytes(await reopened.read(0, 1 << 30)) == expected
