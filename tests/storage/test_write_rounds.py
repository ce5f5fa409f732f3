"""Writes across partitions under fsync=never and always (storage.write_rounds): the appends of many logs that are
ready in one loop turn are written by one storage job.

The scenarios: many partitions appending at once share one round and every append is readable (and on disk after a
reopen); appends of later turns take rounds of their own; a failed write fails only its own log, which heals as
after any failed write; fsync=always still syncs each append after its round; fsync=batch has no write rounds (its
group commit writes and syncs); a shut-down executor fails the appends instead of hanging them.
"""

from __future__ import annotations

import asyncio
import errno

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.log_manager import LogManager
from groupcoord.storage.segment import Segment
from tests.storage.conftest import all_records


def batch(value: bytes) -> bytes:
    return encode_batch([(b"key", value, ())])


async def values(log: PartitionLog) -> list[bytes]:
    return [r.value for r in await all_records(log)]


async def open_manager(tmp_path, partitions: int, policy: FsyncPolicy = FsyncPolicy.NEVER,
                       ) -> tuple[LogManager, list[PartitionLog]]:
    manager = LogManager(tmp_path, policy, LogConfig())
    logs = [await manager.get_or_create("__consumer_offsets", p) for p in range(partitions)]
    return manager, logs


async def test_many_partitions_appending_at_once_are_written_by_one_job(tmp_path):
    manager, logs = await open_manager(tmp_path, 8)
    rounds = manager.write_rounds
    assert all(log.write_rounds is rounds for log in logs)
    before = rounds.rounds
    results = await asyncio.gather(*(log.append(batch(b"v%d" % i)) for i, log in enumerate(logs)))
    assert [r.base_offset for r in results] == [0] * 8
    assert rounds.rounds == before + 1
    assert all(log.high_watermark == 1 for log in logs), "acknowledged appends are readable"
    await manager.close()

    reopened = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    opened = await reopened.open_existing()
    assert [await values(opened[("__consumer_offsets", p)]) for p in range(8)] == [[b"v%d" % p] for p in range(8)]
    await reopened.close()


async def test_appends_of_later_turns_take_rounds_of_their_own_and_keep_each_logs_order(tmp_path):
    manager, logs = await open_manager(tmp_path, 3)
    rounds = manager.write_rounds
    before = rounds.rounds
    for n in range(3):
        await asyncio.gather(*(log.append(batch(b"%d" % n)) for log in logs))
    assert rounds.rounds == before + 3
    assert [await values(log) for log in logs] == [[b"0", b"1", b"2"]] * 3
    await manager.close()


async def test_a_failed_write_fails_only_its_own_log_which_then_heals(tmp_path, monkeypatch):
    manager, logs = await open_manager(tmp_path, 4)
    await asyncio.gather(*(log.append(batch(b"kept")) for log in logs))
    doomed = logs[2].active_segment
    real_write = Segment.write_at
    full = True

    def full_disk_for_one(self, position, data):
        if self is doomed and full:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, position, data)

    monkeypatch.setattr(Segment, "write_at", full_disk_for_one)
    outcomes = await asyncio.gather(*(log.append(batch(b"next")) for log in logs), return_exceptions=True)
    assert [isinstance(o, OSError) for o in outcomes] == [False, False, True, False]
    assert [log.high_watermark for log in logs] == [2, 2, 1, 2]
    assert logs[2].write_failure is not None

    full = False
    logs[2].write_retry_backoff_s = 0.0
    await logs[2].append(batch(b"after"))
    assert logs[2].write_failure is None
    assert (await values(logs[2]))[-1] == b"after"
    await manager.close()


async def test_fsync_always_still_syncs_each_append_after_its_round(tmp_path, monkeypatch):
    flushed: list[Segment] = []
    real_flush = Segment.flush
    monkeypatch.setattr(Segment, "flush", lambda self: (flushed.append(self), real_flush(self))[1])
    manager, logs = await open_manager(tmp_path, 3, FsyncPolicy.ALWAYS)
    before = manager.write_rounds.rounds
    await asyncio.gather(*(log.append(batch(b"x")) for log in logs))
    assert manager.write_rounds.rounds == before + 1
    assert sorted(id(s) for s in flushed) == sorted(id(log.active_segment) for log in logs)
    await manager.close()


async def test_fsync_batch_has_no_write_rounds(tmp_path):
    manager, logs = await open_manager(tmp_path, 1, FsyncPolicy.BATCH)
    assert manager.write_rounds is None and logs[0].write_rounds is None
    await logs[0].append(batch(b"x"))
    assert await values(logs[0]) == [b"x"]
    await manager.close()


async def test_a_round_that_cannot_reach_its_executor_fails_instead_of_hanging(tmp_path):
    manager, logs = await open_manager(tmp_path, 4)
    manager.write_rounds.executor.shutdown(wait=True)
    outcomes = await asyncio.wait_for(
        asyncio.gather(*(log.append(batch(b"x")) for log in logs), return_exceptions=True), timeout=10)
    assert all(isinstance(o, RuntimeError) for o in outcomes), outcomes
