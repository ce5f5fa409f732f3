"""fsync=batch across partitions (storage.group_commit): the appends of many logs that are ready in one loop turn
share one write-and-sync round, made durable by one syncfs when they touch several files.

The scenarios: many partitions committing at once are acknowledged after one syncfs; a few keep an fdatasync each;
appends arriving while two rounds are in flight wait for the next round, which covers all of them; a failed syncfs
fails every append of its round and each log heals as after a failed fdatasync; a failed write fails only its own
log; ``syncfs_min_files = 0`` never calls syncfs; a shut-down executor fails the appends instead of hanging them;
a round ending starts the next one for the logs that waited at once, its outcome handed back in one loop callback;
a handler driven without a Task (the connection's) waiting on an append is resumed in that same callback.
"""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from groupcoord.coordinator.server.driven import Driven
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage import group_commit
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.errors import LogClosedError
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.log_manager import LogManager
from groupcoord.storage.segment import Segment
from tests.storage.conftest import all_records

pytestmark = pytest.mark.skipif(not group_commit.syncfs_available(), reason="syncfs is Linux's")


def batch(value: bytes) -> bytes:
    return encode_batch([(b"key", value, ())])


async def values(log: PartitionLog) -> list[bytes]:
    return [r.value for r in await all_records(log)]


class SyncfsSpy:
    """Counts the real syncfs calls and the descriptors they were given, or fails them when told to."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        self.fail_with: OSError | None = None
        self.gate: threading.Event | None = None
        """Set: each syncfs waits for it (in its storage thread), holding its round in flight."""
        real = group_commit._syncfs

        def spy(fd: int) -> None:
            self.calls.append(fd)
            if self.gate is not None:
                self.gate.wait(10)
            if self.fail_with is not None:
                raise self.fail_with
            real(fd)

        monkeypatch.setattr(group_commit, "_syncfs", spy)


async def open_manager(tmp_path, partitions: int, **kwargs) -> tuple[LogManager, list[PartitionLog]]:
    manager = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig(), **kwargs)
    logs = [await manager.get_or_create("__consumer_offsets", p) for p in range(partitions)]
    return manager, logs


async def test_many_partitions_committing_at_once_are_made_durable_by_one_syncfs(tmp_path, monkeypatch):
    spy = SyncfsSpy(monkeypatch)
    manager, logs = await open_manager(tmp_path, 8)
    results = await asyncio.gather(*(log.append(batch(b"v%d" % i)) for i, log in enumerate(logs)))
    assert [r.base_offset for r in results] == [0] * 8
    assert manager.group_commit.rounds == 1 and manager.group_commit.syncfs_rounds == 1
    assert len(spy.calls) == 1
    assert all(log.high_watermark == 1 for log in logs), "acknowledged appends are readable"
    await manager.close()

    reopened = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig())
    opened = await reopened.open_existing()
    assert [await values(opened[("__consumer_offsets", p)]) for p in range(8)] == [[b"v%d" % p] for p in range(8)]
    await reopened.close()


async def test_a_round_of_few_partitions_keeps_an_fdatasync_each(tmp_path, monkeypatch):
    spy = SyncfsSpy(monkeypatch)
    flushed: list[Segment] = []
    real_flush = Segment.flush
    monkeypatch.setattr(Segment, "flush", lambda self: (flushed.append(self), real_flush(self))[1])
    manager, logs = await open_manager(tmp_path, 2)
    await asyncio.gather(*(log.append(batch(b"x")) for log in logs))
    assert spy.calls == [] and manager.group_commit.syncfs_rounds == 0
    assert sorted(id(s) for s in flushed) == sorted(id(log.active_segment) for log in logs)
    await manager.close()


async def test_appends_arriving_while_two_rounds_are_in_flight_wait_and_share_the_next_one(tmp_path, monkeypatch):
    spy = SyncfsSpy(monkeypatch)
    spy.gate = threading.Event()
    manager, logs = await open_manager(tmp_path, 12)
    rounds = manager.group_commit

    async def turns_until(condition) -> None:
        for _ in range(200):  # a few loop turns: the appends take their locks, the writers run, rounds start
            if condition():
                return
            await asyncio.sleep(0)
        raise AssertionError("the rounds did not start")

    first = [asyncio.ensure_future(log.append(batch(b"first"))) for log in logs[0:3]]
    await turns_until(lambda: rounds.rounds == 1)
    second = [asyncio.ensure_future(log.append(batch(b"second"))) for log in logs[3:6]]
    await turns_until(lambda: rounds.rounds == 2)
    waiting = [asyncio.ensure_future(log.append(batch(b"waits"))) for log in logs[6:12]]
    for _ in range(20):
        await asyncio.sleep(0)
    assert rounds.rounds == 2, "two rounds in flight: the rest wait"
    assert not any(f.done() for f in first + second + waiting)
    spy.gate.set()
    await asyncio.gather(*first, *second, *waiting)
    assert rounds.rounds == 3 and rounds.syncfs_rounds == 3, "the six logs that waited shared one round"
    assert [await values(log) for log in logs] == [[b"first"]] * 3 + [[b"second"]] * 3 + [[b"waits"]] * 6
    await manager.close()


async def test_a_failed_syncfs_fails_every_append_of_its_round_and_each_log_heals(tmp_path, monkeypatch):
    spy = SyncfsSpy(monkeypatch)
    manager, logs = await open_manager(tmp_path, 4)
    await asyncio.gather(*(log.append(batch(b"kept")) for log in logs))
    spy.fail_with = OSError(errno.EIO, "Input/output error")
    outcomes = await asyncio.gather(*(log.append(batch(b"unknown")) for log in logs), return_exceptions=True)
    assert all(isinstance(o, OSError) and o.errno == errno.EIO for o in outcomes), outcomes
    assert all(log.write_failure is not None for log in logs)
    assert all(log.high_watermark == 1 for log in logs), "nothing of the failed round became visible"
    with pytest.raises((OSError, LogClosedError)):
        await logs[0].append(batch(b"refused during the back-off"))

    spy.fail_with = None
    for log in logs:
        log.write_retry_backoff_s = 0.0
    await asyncio.gather(*(log.append(batch(b"after")) for log in logs))
    assert all(log.write_failure is None for log in logs)
    # The failed round's bytes reached the page cache, so the re-read tail keeps them: unacknowledged, but
    # intact, exactly as a restart after a failed fdatasync finds them; the append refused during the back-off
    # wrote nothing.
    assert [await values(log) for log in logs] == [[b"kept", b"unknown", b"after"]] * 4
    await manager.close()


async def test_a_failed_write_fails_only_its_own_log(tmp_path, monkeypatch):
    SyncfsSpy(monkeypatch)
    manager, logs = await open_manager(tmp_path, 4)
    await asyncio.gather(*(log.append(batch(b"kept")) for log in logs))
    doomed = logs[2].active_segment
    real_write = Segment.write_at

    def full_disk_for_one(self, position, data):
        if self is doomed:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, position, data)

    monkeypatch.setattr(Segment, "write_at", full_disk_for_one)
    outcomes = await asyncio.gather(*(log.append(batch(b"next")) for log in logs), return_exceptions=True)
    assert [isinstance(o, OSError) for o in outcomes] == [False, False, True, False]
    assert manager.group_commit.syncfs_rounds == 2, "the other three were still synced together"
    assert [log.high_watermark for log in logs] == [2, 2, 1, 2]
    await manager.close()


async def test_syncfs_can_be_turned_off(tmp_path, monkeypatch):
    spy = SyncfsSpy(monkeypatch)
    manager, logs = await open_manager(tmp_path, 8, syncfs_min_files=0)
    await asyncio.gather(*(log.append(batch(b"x")) for log in logs))
    assert spy.calls == [] and manager.group_commit.syncfs_rounds == 0 and manager.group_commit.rounds == 1
    assert all(log.high_watermark == 1 for log in logs)
    await manager.close()


async def test_a_partition_directory_on_another_filesystem_keeps_its_own_fdatasync(tmp_path, monkeypatch):
    SyncfsSpy(monkeypatch)
    manager = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig())
    real_stat = group_commit.os.stat

    def mounted_elsewhere(path, *args, **kwargs):
        result = real_stat(path, *args, **kwargs)
        if str(path).endswith("elsewhere-0"):
            return os.stat_result((*result[:2], result.st_dev + 1, *result[3:]))
        return result

    monkeypatch.setattr(group_commit.os, "stat", mounted_elsewhere)
    here = await manager.get_or_create("here", 0)
    elsewhere = await manager.get_or_create("elsewhere", 0)
    assert here.group_commit is manager.group_commit and elsewhere.group_commit is None
    await elsewhere.append(batch(b"x"))
    assert await values(elsewhere) == [b"x"]
    await manager.close()


async def test_other_policies_have_no_group_commit(tmp_path):
    for policy in (FsyncPolicy.NEVER, FsyncPolicy.ALWAYS):
        manager = LogManager(tmp_path / policy.value, policy, LogConfig())
        log = await manager.get_or_create("t", 0)
        assert manager.group_commit is None and log.group_commit is None
        await manager.close()


async def test_a_round_that_cannot_reach_its_executor_fails_instead_of_hanging(tmp_path):
    manager, logs = await open_manager(tmp_path, 4)
    manager.group_commit.executor.shutdown(wait=True)
    outcomes = await asyncio.wait_for(
        asyncio.gather(*(log.append(batch(b"x")) for log in logs), return_exceptions=True), timeout=10)
    assert all(isinstance(o, RuntimeError) for o in outcomes), outcomes


async def test_a_round_ending_starts_the_next_for_the_logs_that_waited_in_the_same_callback(tmp_path, monkeypatch):
    """A busy broker's loop turn is long: the logs that waited while two rounds were in flight start their round as
    soon as one of those ends, not a loop turn later, and the storage thread hands a round's outcome back to the
    loop in one callback (no executor future in between). A callback on a first-round append sees the next round
    started already."""
    gates = [threading.Event(), threading.Event(), threading.Event()]  # one per round, in the order they sync
    calls = 0
    real = group_commit._syncfs

    def gated(fd: int) -> None:
        nonlocal calls
        gate, calls = gates[calls], calls + 1
        gate.wait(10)
        real(fd)

    monkeypatch.setattr(group_commit, "_syncfs", gated)
    manager, logs = await open_manager(tmp_path, 12)
    rounds = manager.group_commit
    first = [log.append_now(batch(b"first")) for log in logs[0:3]]
    assert all(f is not None for f in first)
    for _ in range(20):
        await asyncio.sleep(0)
    second = [log.append_now(batch(b"second")) for log in logs[3:6]]
    for _ in range(20):
        await asyncio.sleep(0)
    waiting = [log.append_now(batch(b"waits")) for log in logs[6:12]]
    for _ in range(20):
        await asyncio.sleep(0)
    assert rounds.rounds == 2 and not any(f.done() for f in first + second + waiting)
    seen: list[int] = []
    first[0].add_done_callback(lambda _: seen.append(rounds.rounds))
    gates[0].set()  # only the first round ends: the second stays in flight
    await asyncio.wait_for(asyncio.gather(*first), timeout=10)
    assert seen == [3], "the waiting logs' round started in the callback that ended the first round"
    gates[1].set()
    gates[2].set()
    await asyncio.wait_for(asyncio.gather(*second, *waiting), timeout=10)
    assert [await values(log) for log in logs] == [[b"first"]] * 3 + [[b"second"]] * 3 + [[b"waits"]] * 6
    await manager.close()


@pytest.mark.parametrize("fsync", [FsyncPolicy.BATCH, FsyncPolicy.NEVER])
async def test_a_handler_driven_without_a_task_answers_in_the_callback_that_ended_the_round(tmp_path, fsync):
    """The connection drives a Produce handler without a Task (coordinator/server/driven.py); waiting on its append's
    future it is resumed by the round's end itself (a syncfs round here, write_rounds.py's under fsync=never),
    before any done callback of that future (asyncio runs those a loop turn later: a long one on a busy broker)."""
    manager = LogManager(tmp_path, fsync, LogConfig())
    logs = [await manager.get_or_create("__consumer_offsets", p) for p in range(4)]
    loop = asyncio.get_running_loop()
    order: list[str] = []
    appends = [log.append_now(batch(b"v")) for log in logs]
    appends[0].add_done_callback(lambda _: order.append("the append's done callback"))

    async def handler() -> int:
        result = await appends[0]
        return result.base_offset

    answered = loop.create_future()

    def finish(_driven: Driven, result: object, exc: BaseException | None) -> None:
        order.append("answered")
        answered.set_result((result, exc))

    Driven(handler(), finish, loop).step()
    assert await asyncio.wait_for(answered, 10) == (0, None)
    await asyncio.gather(*appends)
    assert order == ["answered", "the append's done callback"]
    await manager.close()


async def test_the_storage_thread_hands_a_rounds_outcome_or_its_failure_to_the_loop():
    """``submit_round``: the job's outcome per log reaches the loop in one callback; a job that fails as a whole fails
    each of the round's logs with its error."""
    loop = asyncio.get_running_loop()
    got: list[object] = []
    arrived = asyncio.Event()

    def finish(outcomes: object) -> None:
        got.append((threading.current_thread() is threading.main_thread(), outcomes))
        arrived.set()

    def fails() -> list[float]:
        raise OSError(errno.EIO, "gone")

    with ThreadPoolExecutor(1) as executor:
        group_commit.submit_round(executor, loop, finish, 2, lambda a, b: [a, b], 0.1, 0.2)
        await asyncio.wait_for(arrived.wait(), 5)
        arrived.clear()
        group_commit.submit_round(executor, loop, finish, 2, fails)
        await asyncio.wait_for(arrived.wait(), 5)
    assert got[0] == (True, [0.1, 0.2])
    on_loop, failures = got[1]
    assert on_loop is True and len(failures) == 2 and all(isinstance(f, OSError) for f in failures)


def test_a_round_ending_after_its_loop_closed_is_dropped_quietly():
    loop = asyncio.new_event_loop()
    loop.close()
    group_commit._run_then_call_back(loop, lambda outcomes: pytest.fail("called"), 1, lambda: [0.1])
