"""A log whose write or fsync failed (ENOSPC, EIO) takes appends again once the disk does (issue 17).

Before: the first failed write left the log refusing every append until a restart. Now appends are refused
for a short back-off, then the next one re-reads the tail past the recovery point (as a restart would: a torn
write is cut) and goes on. Nothing acknowledged is lost, and offsets given to failed appends are reused.
The first tests inject the fault at the file layer; the last one fills a real (tmpfs) filesystem.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.errors import LogClosedError
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.segment import Segment
from tests.support.tmpfs import small_filesystem_or_skip
from tests.storage.conftest import all_records, small_config


def batch(value: bytes) -> bytes:
    return encode_batch([(None, value, ())])


async def values(log: PartitionLog) -> list[bytes]:
    return [r.value for r in await all_records(log)]


async def test_a_log_that_hit_enospc_takes_appends_again_once_writes_succeed(log_dir, monkeypatch):
    log = await PartitionLog.open(log_dir, small_config(), FsyncPolicy.BATCH)
    log.write_retry_backoff_s = 0.0
    acknowledged = [b"a", b"b"]
    for value in acknowledged:
        await log.append(batch(value))
    real_write = Segment.write_at

    def full_disk(self, position, data):
        real_write(self, position, bytes(data)[: len(data) // 2])  # a torn write, as a full disk leaves
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Segment, "write_at", full_disk)
    with pytest.raises(OSError):
        await log.append(batch(b"lost"))
    assert log.write_failure is not None
    with pytest.raises((OSError, LogClosedError)):
        await log.append(batch(b"still full"))
    monkeypatch.setattr(Segment, "write_at", real_write)
    result = await log.append(batch(b"c"))
    assert log.write_failure is None
    assert result.base_offset == 2, "the offsets of the failed appends are given out again"
    assert await values(log) == [b"a", b"b", b"c"]
    await log.close()
    reopened = await PartitionLog.open(log_dir, small_config(), FsyncPolicy.BATCH)
    assert await values(reopened) == [b"a", b"b", b"c"]
    await reopened.close()


async def test_appends_are_refused_without_touching_the_disk_during_the_back_off(log_dir, monkeypatch):
    log = await PartitionLog.open(log_dir, small_config(), FsyncPolicy.BATCH)
    log.write_retry_backoff_s = 3600.0
    await log.append(batch(b"a"))
    monkeypatch.setattr(Segment, "write_at", lambda self, p, d: (_ for _ in ()).throw(OSError(errno.EIO, "EIO")))
    with pytest.raises(OSError):
        await log.append(batch(b"b"))
    monkeypatch.undo()
    with pytest.raises(LogClosedError):
        await log.append(batch(b"c"))
    log.write_retry_backoff_s = 0.0
    await log.append(batch(b"d"))
    assert await values(log) == [b"a", b"d"]
    await log.close()


async def test_a_failed_fsync_stops_appends_until_the_tail_is_checked_again(log_dir, monkeypatch):
    log = await PartitionLog.open(log_dir, small_config(), FsyncPolicy.ALWAYS)
    log.write_retry_backoff_s = 0.0
    await log.append(batch(b"a"))
    monkeypatch.setattr(Segment, "flush", lambda self: (_ for _ in ()).throw(OSError(errno.EIO, "fsync EIO")))
    with pytest.raises(OSError):
        await log.append(batch(b"maybe"))
    assert log.write_failure is not None
    monkeypatch.undo()
    await log.append(batch(b"b"))
    assert log.write_failure is None
    got = await values(log)
    assert got[0] == b"a" and got[-1] == b"b"  # the unacknowledged one may or may not have reached the disk
    await log.close()




@pytest.fixture
def small_filesystem(tmp_path: Path):
    with small_filesystem_or_skip(tmp_path / "fs", "1m", "a real full disk (injected faults cover the rest)") as mount:
        yield mount


async def test_a_real_full_disk_then_freed(small_filesystem):
    filler = small_filesystem / "filler"
    log = await PartitionLog.open(small_filesystem / "orders-0",
                                  LogConfig.from_topic_configs({"segment.bytes": str(64 << 20)}), FsyncPolicy.BATCH)
    log.write_retry_backoff_s = 0.0
    with open(filler, "wb") as handle:  # leave about 64 KiB
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    os.truncate(filler, max(os.path.getsize(filler) - 65536, 0))
    acknowledged, n = [], 0
    with pytest.raises(OSError):
        while True:
            value = f"record-{n:06d}".encode() * 64
            await log.append(batch(value))
            acknowledged.append(value)
            n += 1
    assert acknowledged, "some appends fit before the disk filled"
    with pytest.raises((OSError, LogClosedError)):
        await log.append(batch(b"x" * 100_000))  # larger than what is left
    filler.unlink()
    await log.append(batch(b"after"))
    assert await values(log) == [*acknowledged, b"after"]
    await log.close()
