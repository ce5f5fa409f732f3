"""Logs under a data directory's shared rounds (fsync=batch: group_commit; never and always: write_rounds) join the
next round instead of running a writer Task of their own: the round takes their queued writes as it starts and
tells them the outcome as it ends. A ``write_and_sync``/``write`` caller and joined logs share a round; a log that
is closed while its writes ride a round waits for them; a log without shared rounds still has its writer Task."""

from __future__ import annotations

import asyncio

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.log_manager import LogManager
from tests.storage.conftest import all_records, small_config


def batch(value: bytes) -> bytes:
    return encode_batch([(b"key", value, ())])


async def values(log: PartitionLog) -> list[bytes]:
    return [r.value for r in await all_records(log)]


@pytest.mark.parametrize("policy", [FsyncPolicy.BATCH, FsyncPolicy.NEVER, FsyncPolicy.ALWAYS])
async def test_appends_of_many_logs_ride_one_round_with_no_writer_task(tmp_path, policy):
    manager = LogManager(tmp_path, policy, LogConfig(), syncfs_min_files=0)
    logs = [await manager.get_or_create("orders", p) for p in range(4)]
    rounds = manager.group_commit if policy is FsyncPolicy.BATCH else manager.write_rounds
    before = rounds.rounds
    tasks_before = len(asyncio.all_tasks())
    appends = [asyncio.ensure_future(log.append(batch(b"%d-%d" % (p, i)))) for p, log in enumerate(logs)
               for i in range(3)]
    await asyncio.sleep(0)  # each append reserved its offsets and joined the round
    writers = [log._writer for log in logs]
    assert all(w is not None and not isinstance(w, asyncio.Task) for w in writers), "no writer Task"
    assert len(asyncio.all_tasks()) == tasks_before + len(appends)
    results = await asyncio.gather(*appends)
    assert [r.base_offset for r in results] == [0, 1, 2] * 4
    assert rounds.rounds - before == 1
    for p, log in enumerate(logs):
        assert log.high_watermark == 3 and log._writer is None
        assert await values(log) == [b"%d-%d" % (p, i) for i in range(3)]
    await manager.close()


async def test_a_caller_of_write_and_sync_and_a_joined_log_share_a_round(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig(), syncfs_min_files=0)
    first, second = [await manager.get_or_create("orders", p) for p in range(2)]
    before = manager.group_commit.rounds
    segment = second.active_segment
    data = bytearray(batch(b"direct"))
    direct = asyncio.ensure_future(manager.group_commit.write_and_sync([(segment, 0, [data])], [segment]))
    await asyncio.sleep(0)  # its writes wait for the round it scheduled
    reserved = first.append_now(batch(b"joined"))
    assert (await reserved).base_offset == 0
    assert await direct >= 0.0
    assert manager.group_commit.rounds - before == 1
    await manager.close()


@pytest.mark.parametrize("policy", [FsyncPolicy.BATCH, FsyncPolicy.NEVER])
async def test_closing_waits_for_the_writes_a_round_holds(tmp_path, policy):
    manager = LogManager(tmp_path, policy, LogConfig())
    log = await manager.get_or_create("orders", 0)
    pending = [log.append_now(batch(b"%d" % i)) for i in range(5)]
    await log.close()  # the writes are in a round (or about to be): close waits for them
    assert [(await p).base_offset for p in pending] == list(range(5))
    reopened = await PartitionLog.open(tmp_path / "orders-0", LogConfig(), policy)
    assert await values(reopened) == [b"%d" % i for i in range(5)]
    await reopened.close()
    await manager.close()


async def test_a_log_without_shared_rounds_keeps_its_writer_task(open_log):
    log = await open_log(small_config(), FsyncPolicy.BATCH)
    reserved = log.append_now(batch(b"own"))
    assert isinstance(log._writer, asyncio.Task)
    assert (await reserved).base_offset == 0 and log.high_watermark == 1
