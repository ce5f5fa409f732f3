"""Kafka's recovery-point-offset-checkpoint: a restart after a crash re-checks only what followed it."""

import asyncio
import shutil

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage import segment as segment_module
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from groupcoord.storage.recovery import CLEAN_SHUTDOWN_MARKER
from groupcoord.storage.recovery_checkpoint import RECOVERY_POINT_CHECKPOINT_FILE, RecoveryPointCheckpoint
from tests.storage.conftest import all_records

CONFIG = LogConfig.from_topic_configs({"index.interval.bytes": "256"})


async def append(log, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        await log.append(encode_batch([(b"key-%d" % i, b"value" * 10, ())], base_timestamp=1000 + i))


@pytest.fixture
def crc_checks(monkeypatch):
    checked: list[int] = []
    real = segment_module.verify_crc

    def counting(buf, pos=0):
        checked.append(pos)
        return real(buf, pos)

    monkeypatch.setattr(segment_module, "verify_crc", counting)
    return checked


async def test_the_checkpoint_is_written_in_kafkas_format_at_a_clean_shutdown(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, CONFIG)
    await append(await manager.get_or_create("orders", 1), 7)
    await append(await manager.get_or_create("orders", 0), 3)
    await manager.close()
    assert (tmp_path / RECOVERY_POINT_CHECKPOINT_FILE).read_text() == "0\n2\norders 0 3\norders 1 7\n"


async def crashed_copy(tmp_path, checkpoint_before_crash: bool):
    """400 batches in one segment, a checkpoint (or not) after 390 of them, then a "crash": the data directory
    is copied while the broker still runs, so it has no clean-shutdown marker."""
    live = tmp_path / "live"
    manager = LogManager(live, FsyncPolicy.ALWAYS, CONFIG)
    log = await manager.get_or_create("orders", 0)
    await append(log, 390)
    if checkpoint_before_crash:
        assert await manager.checkpoint_recovery_points()
        assert RecoveryPointCheckpoint(live).read() == {("orders", 0): 390}
    await append(log, 10, start=390)
    crashed = tmp_path / "crashed"
    shutil.copytree(live, crashed)
    await manager.close()
    assert not (crashed / "orders-0" / CLEAN_SHUTDOWN_MARKER).exists()
    return crashed


@pytest.mark.parametrize(("checkpointed", "most_checks"), [(True, 20), (False, 400)])
async def test_after_a_crash_only_batches_past_the_recovery_point_are_rechecked(tmp_path, crc_checks,
                                                                                checkpointed, most_checks):
    crashed = await crashed_copy(tmp_path, checkpointed)
    manager = LogManager(crashed, FsyncPolicy.ALWAYS, CONFIG)
    log = (await manager.open_existing())[("orders", 0)]
    assert 10 <= len(crc_checks) <= most_checks
    if not checkpointed:
        assert len(crc_checks) == 400
    assert log.log_end_offset == 400
    assert [r.offset for r in await all_records(log)] == list(range(400))
    await manager.close()


async def test_a_torn_write_past_the_recovery_point_is_still_cut(tmp_path):
    crashed = await crashed_copy(tmp_path, checkpoint_before_crash=True)
    segment = next((crashed / "orders-0").glob("*.log"))
    segment.write_bytes(segment.read_bytes()[:-5])
    manager = LogManager(crashed, FsyncPolicy.ALWAYS, CONFIG)
    log = (await manager.open_existing())[("orders", 0)]
    assert log.log_end_offset == 399
    assert [r.offset for r in await all_records(log)] == list(range(399))
    await manager.close()


async def test_the_background_loop_flushes_and_checkpoints_periodically(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, CONFIG, flush_checkpoint_interval_s=0.02,
                         cleaner_backoff_s=3600, retention_check_interval_s=3600)
    log = await manager.get_or_create("orders", 0)
    await manager.start_background()
    await append(log, 5)
    for _ in range(200):
        if RecoveryPointCheckpoint(tmp_path).read().get(("orders", 0)) == 5:
            break
        await asyncio.sleep(0.01)
    assert RecoveryPointCheckpoint(tmp_path).read() == {("orders", 0): 5}
    assert log.recovery_point == 5
    await manager.close()


async def test_a_full_truncation_lowers_the_recovery_point(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, CONFIG)
    log = await manager.get_or_create("orders", 0)
    await append(log, 20)
    await manager.checkpoint_recovery_points()
    await log.truncate_fully(3)
    assert log.recovery_point == 3
    await manager.checkpoint_recovery_points()
    assert RecoveryPointCheckpoint(tmp_path).read() == {("orders", 0): 3}
    await manager.close()


async def test_entries_of_partitions_not_opened_are_kept_and_deleted_topics_dropped(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, CONFIG)
    for topic in ("kept", "doomed", "other"):
        await append(await manager.get_or_create(topic, 0), 4)
    await manager.close()
    partial = LogManager(tmp_path, FsyncPolicy.NEVER, CONFIG)
    await append(await partial.get_or_create("other", 0), 2, start=4)
    await partial.delete_topic("other")
    await append(await partial.get_or_create("doomed", 0), 1, start=4)
    await partial.close()
    assert RecoveryPointCheckpoint(tmp_path).read() == {("kept", 0): 4, ("doomed", 0): 5}


async def test_a_checkpoint_flushes_every_segment_rolled_since_the_last_one(tmp_path, monkeypatch):
    from groupcoord.storage.segment import Segment

    small = LogConfig.from_topic_configs({"segment.bytes": "1024", "index.interval.bytes": "256"})
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, small)
    log = await manager.get_or_create("orders", 0)
    await append(log, 40)
    assert len(log.segments) > 3
    flushed: list[int] = []
    real = Segment.flush
    monkeypatch.setattr(Segment, "flush", lambda self: (flushed.append(self.base_offset), real(self))[1])
    await manager.checkpoint_recovery_points()
    assert sorted(flushed) == [s.base_offset for s in log.segments]
    flushed.clear()
    await append(log, 1, start=40)
    await manager.checkpoint_recovery_points()
    assert flushed == [log.active_segment.base_offset]
    await manager.close()
