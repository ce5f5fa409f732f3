"""The cleaner remembers how far it compacted each log in Kafka's cleaner-offset-checkpoint file."""

import os

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage import cleaner_checkpoint as checkpoint_module
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.cleaner_checkpoint import CLEANER_CHECKPOINT_FILE, CleanerCheckpoint
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from groupcoord.storage.recovery_checkpoint import RECOVERY_POINT_CHECKPOINT_FILE
from tests.storage.conftest import all_records, small_config

T0 = 1_700_000_000_000
COMPACTED = small_config(cleanup_policy="compact", segment_bytes=1024, min_cleanable_dirty_ratio=0.5)


async def write(log, ops: list[tuple[bytes, bytes]]) -> None:
    for key, value in ops:
        await log.append(encode_batch([(key, value, ())], base_timestamp=T0))


async def compacted_topic(manager: LogManager, topic: str):
    """A compacted partition holding 40 distinct keys, cleaned once: almost all of it clean."""
    log = await manager.get_or_create(topic, 0, COMPACTED)
    await write(log, [(b"key-%02d" % i, b"v" * 40) for i in range(40)])
    await log.roll()
    await manager.clean_now(topic)
    return log


def test_the_file_is_kafkas_offset_checkpoint_format(tmp_path):
    checkpoint = CleanerCheckpoint(tmp_path)
    checkpoint.write({("orders", 1): 7, ("orders", 0): 1200, ("__consumer_offsets", 49): 0})
    assert (tmp_path / CLEANER_CHECKPOINT_FILE).read_text() == (
        "0\n3\n__consumer_offsets 49 0\norders 0 1200\norders 1 7\n")
    assert checkpoint.read() == {("orders", 1): 7, ("orders", 0): 1200, ("__consumer_offsets", 49): 0}
    assert not (tmp_path / (CLEANER_CHECKPOINT_FILE + ".tmp")).exists()


def test_a_file_written_by_kafka_reads_back(tmp_path):
    (tmp_path / CLEANER_CHECKPOINT_FILE).write_text("0\n2\norders\t0   1200\norders 1 7\n")
    assert CleanerCheckpoint(tmp_path).read() == {("orders", 0): 1200, ("orders", 1): 7}


@pytest.mark.parametrize("content", [
    b"",                                  # Kafka creates the file empty
    b"0\n",                               # cut right after the version
    b"1\n1\norders 0 5\n",                # a version this broker does not know
    b"0\n2\norders 0 5\n",                # cut short: fewer entries than announced
    b"0\n1\norders 0 5\norders 1 6\n",    # more entries than announced
    b"0\n1\norders zero 5\n",             # not a number
    b"0\n1\norders 0\n",                  # a field missing
    b"\xff\xfe\x00garbage",               # not even text
])
def test_a_missing_truncated_or_garbled_file_reads_as_empty(tmp_path, content):
    (tmp_path / CLEANER_CHECKPOINT_FILE).write_bytes(content)
    assert CleanerCheckpoint(tmp_path).read() == {}


def test_no_file_at_all_reads_as_empty(tmp_path):
    assert CleanerCheckpoint(tmp_path / "never-created").read() == {}


def test_a_crash_while_writing_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    checkpoint = CleanerCheckpoint(tmp_path)
    checkpoint.write({("orders", 0): 10})

    def crash(*args):
        raise OSError("disk went away")

    monkeypatch.setattr(checkpoint_module.os, "replace", crash)
    with pytest.raises(OSError):
        checkpoint.write({("orders", 0): 99})
    monkeypatch.undo()
    assert CleanerCheckpoint(tmp_path).read() == {("orders", 0): 10}


async def test_a_restarted_broker_judges_the_dirty_ratio_from_the_checkpoint(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    log = await compacted_topic(manager, "state")
    cleaned_up_to = log.active_segment.base_offset
    assert CleanerCheckpoint(tmp_path).read() == {("state", 0): cleaned_up_to}
    await manager.close()

    restarted = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    log = (await restarted.open_existing())[("state", 0)]
    await write(log, [(b"key-00", b"new"), (b"key-01", b"new")])
    await log.roll()
    target = restarted.cleaner.to_clean(log)
    assert target.first_dirty_offset == cleaned_up_to
    assert 0 < target.cleanable_ratio < 0.5
    assert not restarted.cleaner.needs_cleaning(log)
    assert await restarted.clean_filthiest() == 0
    forgetful = LogCleaner()
    assert forgetful.to_clean(log).cleanable_ratio == 1.0, "without the checkpoint every byte looks dirty"
    await restarted.close()


async def test_a_garbled_checkpoint_costs_one_extra_compaction_not_a_crash(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    log = await compacted_topic(manager, "state")
    await manager.close()
    (tmp_path / CLEANER_CHECKPOINT_FILE).write_bytes(b"0\n7\nstate 0 \x00\x01")

    restarted = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    log = (await restarted.open_existing())[("state", 0)]
    assert restarted.cleaner.needs_cleaning(log), "with no usable checkpoint the whole log is dirty"
    assert await restarted.clean_filthiest() == 1
    assert CleanerCheckpoint(tmp_path).read() == {("state", 0): log.active_segment.base_offset}
    assert len(await all_records(log)) == 40
    await restarted.close()


async def restart_with_checkpoint(tmp_path, offsets: dict) -> tuple[LogManager, object]:
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    await compacted_topic(manager, "state")
    await manager.close()
    CleanerCheckpoint(tmp_path).write(offsets)
    restarted = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    return restarted, (await restarted.open_existing())[("state", 0)]


async def test_a_checkpoint_past_the_log_end_resets_to_the_log_start(tmp_path):
    restarted, log = await restart_with_checkpoint(tmp_path, {("state", 0): 10_000})
    assert restarted.cleaner.first_dirty_offset(log) == 0, "Kafka assumes the tail was lost: all of it is dirty"
    assert restarted.cleaner.checkpoints == {("state", 0): 0}
    assert restarted.cleaner.needs_cleaning(log)
    await restarted.close()


async def test_a_checkpoint_before_the_log_start_resets_to_the_log_start(tmp_path):
    restarted, log = await restart_with_checkpoint(tmp_path, {("state", 0): 1})
    await log.delete_segments([log.segments[0]], "retention")
    assert log.log_start_offset > 1
    assert restarted.cleaner.first_dirty_offset(log) == log.log_start_offset
    assert restarted.cleaner.checkpoints == {("state", 0): log.log_start_offset}
    await restarted.close()


async def test_deleting_a_topic_drops_its_checkpoint_entry(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    await compacted_topic(manager, "doomed")
    kept = await compacted_topic(manager, "kept")
    assert set(CleanerCheckpoint(tmp_path).read()) == {("doomed", 0), ("kept", 0)}
    await manager.delete_topic("doomed")
    assert CleanerCheckpoint(tmp_path).read() == {("kept", 0): kept.active_segment.base_offset}
    recreated = await manager.get_or_create("doomed", 0, COMPACTED)
    assert manager.cleaner.first_dirty_offset(recreated) == 0
    await manager.close()
    assert sorted(os.listdir(tmp_path)) == [CLEANER_CHECKPOINT_FILE, "doomed-0", "kept-0",
                                            RECOVERY_POINT_CHECKPOINT_FILE]
