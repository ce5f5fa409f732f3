"""PartitionLog.append_now: an append reserved at once (no Task, no coroutine, no lock acquire) when the log can
take it, and None (nothing done) when it cannot, so the caller awaits ``append``, the general path. Both give the
same offsets, bytes and answers."""

from __future__ import annotations

import asyncio
import errno

import pytest

from groupcoord.protocol.record_batch import encode_batch, iter_batches
from groupcoord.storage.config import FsyncPolicy
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.segment import Segment
from tests.storage.conftest import small_config


def batch(i: int, count: int = 3) -> bytes:
    return encode_batch([(b"key-%d" % i, b"%d:" % i + b"x" * 40, ()) for _ in range(count)],
                        base_timestamp=1_000 + i)


def headers_of(data: bytes):
    return list(iter_batches(data, verify=False))


@pytest.mark.parametrize("fsync", [FsyncPolicy.BATCH, FsyncPolicy.NEVER])
async def test_an_append_reserved_at_once_is_answered_once_durable(open_log, fsync):
    log = await open_log(fsync=fsync)
    assigned = []
    first = log.append_now(batch(0), on_assigned=lambda a, b: assigned.append((a, b)))
    second = log.append_now(batch(1), headers=headers_of(batch(1)))
    assert first is not None and second is not None
    assert assigned == [(0, 2)], "told the offsets before they can be read"
    assert log.log_end_offset == 6 and log.high_watermark == 0, "reserved, not yet visible"
    one, two = await first, await second
    assert (one.base_offset, one.last_offset, one.log_append_time, one.max_timestamp) == (0, 2, -1, 1_000)
    assert (two.base_offset, two.last_offset) == (3, 5)
    assert log.high_watermark == 6


async def test_fsync_always_takes_the_general_path(open_log):
    log = await open_log(fsync=FsyncPolicy.ALWAYS)
    assert log.append_now(batch(0)) is None
    assert log.log_end_offset == 0
    assert (await log.append(batch(0))).last_offset == 2


async def test_a_held_or_awaited_append_lock_is_never_overtaken(open_log):
    log = await open_log()
    assert log._append_lock.try_acquire()  # as a rolling append holds it while the new segment is made
    queued = asyncio.create_task(log.append(batch(0)))
    await asyncio.sleep(0)
    assert log.append_now(batch(1)) is None
    log._append_lock.release()  # handed to the queued append: still not free
    assert log.append_now(batch(1)) is None
    assert (await queued).base_offset == 0
    later = log.append_now(batch(1))
    assert later is not None and (await later).base_offset == 3


async def test_a_segment_to_roll_is_left_to_the_general_path_with_nothing_changed(open_log):
    log = await open_log(small_config(segment_bytes=400))
    await log.append(batch(0))
    end, size = log.log_end_offset, log.active_segment.size
    assert log.append_now(batch(1)) is None, "the batch does not fit the active segment"
    assert (log.log_end_offset, log.active_segment.size, len(log.segments)) == (end, size, 1)
    result = await log.append(batch(1))
    assert result.base_offset == 3 and len(log.segments) == 2


async def test_a_failed_log_is_left_to_the_general_path(open_log, monkeypatch):
    log = await open_log(fsync=FsyncPolicy.BATCH)
    log.write_retry_backoff_s = 3600.0

    def full_disk(self, position, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Segment, "write_at", full_disk)
    failing = log.append_now(batch(0))
    assert failing is not None
    with pytest.raises(OSError):
        await failing
    assert log.write_failure is not None and log.high_watermark == 0
    assert log.append_now(batch(1)) is None


async def test_log_append_time_topics_are_stamped_as_by_the_general_path(open_log):
    log = await open_log(small_config(message_timestamp_type="LogAppendTime"))
    now = log.append_now(batch(0), log_append_time=123_456)
    result = await now
    assert (result.log_append_time, result.max_timestamp) == (123_456, 123_456)
    [(_, header)] = headers_of(await log.read(0, 1 << 20))
    assert header.max_timestamp == 123_456 and header.timestamp_type == 1


@pytest.mark.parametrize("fsync", [FsyncPolicy.BATCH, FsyncPolicy.NEVER, FsyncPolicy.ALWAYS])
async def test_both_paths_give_the_same_offsets_answers_and_bytes(open_log, tmp_path, fsync):
    fast = await open_log(fsync=fsync, directory=tmp_path / "fast-0")
    general = await open_log(fsync=fsync, directory=tmp_path / "general-0")
    general._takes_now = lambda: False  # every append through the lock
    sent = [batch(i, count=1 + i % 3) for i in range(12)]
    fast_answers, general_answers = [], []
    for data in sent:
        reserved = fast.append_now(data)
        fast_answers.append(await (reserved if reserved is not None else fast.append(data)))
        general_answers.append(await general.append(data))
    assert fast_answers == general_answers
    assert fast.high_watermark == general.high_watermark == fast.log_end_offset
    assert await fast.read(0, 1 << 20) == await general.read(0, 1 << 20)
