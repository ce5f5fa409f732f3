"""Durability policies: when an append is acknowledged relative to the fsync that covers it."""

import asyncio
import os
import threading
import time

import pytest

from groupcoord.protocol.record_batch import encode_batch, iter_batches
from groupcoord.storage import segment as segment_module
from groupcoord.storage.config import FsyncPolicy
from groupcoord.storage.observer import NullObserver
from tests.storage.conftest import small_config


class FsyncRecorder:
    """Wraps the durability calls (os.fsync, and the fdatasync segments flush with): records, for each
    one of a .log file, the file size it started at and when it ended."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[tuple[int, float]] = []
        self._lock = threading.Lock()

    def wrap(self, real):
        def recorded(fd: int) -> None:
            is_log = os.readlink(f"/proc/self/fd/{fd}").endswith(".log")
            size = os.fstat(fd).st_size
            if is_log and self.delay:
                time.sleep(self.delay)
            real(fd)
            if is_log:
                with self._lock:
                    self.calls.append((size, time.monotonic()))

        return recorded


@pytest.fixture
def fsyncs(monkeypatch):
    recorder = FsyncRecorder(delay=0.02)
    monkeypatch.setattr(os, "fsync", recorder.wrap(os.fsync))
    monkeypatch.setattr(segment_module, "_datasync", recorder.wrap(segment_module._datasync))
    return recorder


CONFIG = small_config(segment_bytes=1 << 24)


async def append_concurrently(log, count: int) -> list[tuple[int, float]]:
    """Fire ``count`` appends at once; return (last offset, time acknowledged) for each."""
    acknowledged: list[tuple[int, float]] = []

    async def one(i: int) -> None:
        result = await log.append(encode_batch([(b"k%d" % i, b"v" * 100, ())]))
        acknowledged.append((result.last_offset, time.monotonic()))

    await asyncio.gather(*(one(i) for i in range(count)))
    return acknowledged


async def end_positions(log) -> dict[int, int]:
    data = await log.read(0, 1 << 24)
    return {header.last_offset: pos + header.size for pos, header in iter_batches(data)}


def covered_before_ack(fsyncs: FsyncRecorder, end: int, acked_at: float) -> bool:
    return any(size >= end and done <= acked_at for size, done in fsyncs.calls)


async def test_always_fsyncs_every_append_before_acknowledging_it(open_log, fsyncs):
    log = await open_log(CONFIG, FsyncPolicy.ALWAYS)
    acknowledged = await append_concurrently(log, 10)
    assert len(fsyncs.calls) >= 10
    ends = await end_positions(log)
    assert all(covered_before_ack(fsyncs, ends[offset], at) for offset, at in acknowledged)


async def test_batch_policy_shares_fsyncs_but_never_acknowledges_early(open_log, fsyncs):
    log = await open_log(CONFIG, FsyncPolicy.BATCH)
    acknowledged = await append_concurrently(log, 40)
    assert len(acknowledged) == 40
    assert 1 <= len(fsyncs.calls) <= 10, f"40 appends took {len(fsyncs.calls)} fsyncs"
    ends = await end_positions(log)
    assert all(covered_before_ack(fsyncs, ends[offset], at) for offset, at in acknowledged)


async def test_batch_policy_observer_counts_the_shared_fsyncs(log_dir, fsyncs):
    from groupcoord.storage.log import PartitionLog

    class Counting(NullObserver):
        def __init__(self):
            self.appends = 0
            self.fsyncs = 0

        def on_append(self, seconds, nbytes):
            self.appends += 1

        def on_fsync(self, seconds):
            self.fsyncs += 1

    observer = Counting()
    log = await PartitionLog.open(log_dir, CONFIG, FsyncPolicy.BATCH, observer=observer)
    await append_concurrently(log, 30)
    await log.close()
    assert observer.appends == 30
    assert observer.fsyncs == len([c for c in fsyncs.calls]) - 1, "close adds one fsync of its own"
    assert observer.fsyncs < 30


async def test_never_leaves_appends_to_the_page_cache(open_log, fsyncs):
    log = await open_log(CONFIG, FsyncPolicy.NEVER)
    await append_concurrently(log, 10)
    assert fsyncs.calls == []
    assert log.high_watermark == 10
