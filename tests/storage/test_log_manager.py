"""A data directory full of partitions: creation, restart, per-topic config, deletion, background work."""

import asyncio
import json
import os
import time

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import CLEAN_SHUTDOWN_MARKER
from groupcoord.storage.log_manager import TOPIC_CONFIG_FILE, LogManager
from tests.storage.conftest import all_records, small_config


async def test_partitions_and_their_configs_come_back_after_a_restart(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    compacted = small_config(cleanup_policy="compact")
    log = await manager.get_or_create("__consumer_offsets", 7, compacted)
    await log.append(encode_batch([(b"k", b"v", ())]))
    await manager.get_or_create("orders", 0)
    stored = json.loads((tmp_path / "__consumer_offsets-7" / TOPIC_CONFIG_FILE).read_text())
    assert stored["cleanup.policy"] == "compact"
    await manager.close()

    restarted = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    logs = await restarted.open_existing()
    assert set(logs) == {("__consumer_offsets", 7), ("orders", 0)}
    assert logs[("__consumer_offsets", 7)].config == compacted
    assert logs[("__consumer_offsets", 7)].log_end_offset == 1
    assert restarted.get("orders", 0) is logs[("orders", 0)] and restarted.get("orders", 1) is None
    await restarted.close()


async def test_concurrent_creation_yields_one_log(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    first, second = await asyncio.gather(manager.get_or_create("t", 0), manager.get_or_create("t", 0))
    assert first is second
    await manager.close()


async def test_deleting_a_topic_removes_every_partition(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    for partition in range(3):
        await manager.get_or_create("doomed", partition)
    await manager.get_or_create("kept", 0)
    await manager.delete_topic("doomed")
    assert manager.topics() == {"kept"}
    assert sorted(os.listdir(tmp_path)) == ["kept-0"]
    await manager.close()


async def test_half_deleted_topics_are_finished_on_startup(tmp_path):
    leftover = tmp_path / "gone-0.0123abcd-delete"
    leftover.mkdir(parents=True)
    (leftover / "00000000000000000000.log").write_bytes(b"")
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    assert await manager.open_existing() == {}
    assert not leftover.exists()
    await manager.close()


async def test_background_loops_compact_and_expire(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig(), cleaner_backoff_s=0.05,
                         retention_check_interval_s=0.05)
    compacted = await manager.get_or_create("state", 0, small_config(cleanup_policy="compact", segment_bytes=1024))
    expiring = await manager.get_or_create("events", 0, small_config(segment_bytes=1024, retention_ms=60_000))
    for i in range(60):
        await compacted.append(encode_batch([(b"same-key", b"v%d" % i + b"x" * 40, ())]))
        await expiring.append(encode_batch([(b"k", b"x" * 40, ())], base_timestamp=int(time.time() * 1000) - 120_000))
    await manager.start_background()
    deadline = time.monotonic() + 5

    async def cleaned_records() -> list:
        return [r for r in await all_records(compacted) if r.offset < compacted.active_segment.base_offset]

    while time.monotonic() < deadline and (len(await cleaned_records()) > 1 or expiring.log_start_offset == 0):
        await asyncio.sleep(0.05)
    cleaned = await cleaned_records()
    assert len(cleaned) == 1 and cleaned[0].value.startswith(b"v%d" % (compacted.active_segment.base_offset - 1))
    assert expiring.log_start_offset > 0
    await manager.stop()
    assert manager.logs == {} and (tmp_path / "state-0" / CLEAN_SHUTDOWN_MARKER).exists()


async def test_clean_now_can_target_one_topic(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    config = small_config(cleanup_policy="compact", segment_bytes=1024)
    one = await manager.get_or_create("one", 0, config)
    two = await manager.get_or_create("two", 0, config)
    for log in (one, two):
        for i in range(40):
            await log.append(encode_batch([(b"k", b"v" * 40, ())]))
    stats = await manager.clean_now("one")
    assert stats.partitions_cleaned == 1 and stats.segments_cleaned > 0
    assert len(await all_records(one)) < len(await all_records(two)) == 40
    await manager.close()


async def test_altered_topic_configs_are_applied_and_persisted(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    for partition in range(2):
        await manager.get_or_create("orders", partition)
    altered = LogConfig.from_topic_configs({"retention.ms": "1000"})
    await manager.update_config("orders", altered)
    assert all(log.config == altered for log in manager.partitions("orders"))
    await manager.stop()
    restarted = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    logs = await restarted.open_existing()
    assert logs[("orders", 1)].config.retention_ms == 1000
    await restarted.stop()


def corrupt_the_middle(directory, position: int = 200) -> bytes:
    """Flip a byte inside the first batch of a log that has valid batches after it; drop the clean marker so
    recovery validates every batch. Returns the corrupted bytes, to check nothing rewrites them."""
    segment = next(directory.glob("*.log"))
    data = bytearray(segment.read_bytes())
    data[position] ^= 0xFF
    segment.write_bytes(bytes(data))
    (directory / CLEAN_SHUTDOWN_MARKER).unlink(missing_ok=True)
    return bytes(data)


async def test_a_partition_corrupt_in_the_middle_goes_offline_alone(tmp_path):
    import pytest

    from groupcoord.storage.errors import CorruptLogError

    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    for partition in (0, 1):
        log = await manager.get_or_create("orders", partition)
        for _ in range(5):
            await log.append(encode_batch([(b"k", b"v" * 100, ())]))
    await manager.close()
    corrupted = corrupt_the_middle(tmp_path / "orders-0")

    reopened = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    opened = await reopened.open_existing()
    assert set(opened) == {("orders", 1)} and set(reopened.refused) == {("orders", 0)}
    assert "CRC mismatch" in str(reopened.refused[("orders", 0)])
    with pytest.raises(CorruptLogError):
        await reopened.get_or_create("orders", 0)
    assert next((tmp_path / "orders-0").glob("*.log")).read_bytes() == corrupted, "left as it was"
    await reopened.close()


async def test_a_stop_closes_every_log_cleanly_even_when_one_fails_and_then_says_so(tmp_path, monkeypatch):
    """Logs close side by side; one whose close fails does not leave the others without their clean-shutdown
    marker, and the failure still reaches the caller (the broker's stop) once every log is done."""
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, LogConfig())
    for partition in range(6):
        log = await manager.get_or_create("t", partition)
        await log.append(encode_batch([(b"k", b"v", ())]))
    failing = manager.get("t", 3)

    async def broken_close() -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(failing, "close", broken_close)
    try:
        await manager.close()
    except OSError as exc:
        assert exc.errno == 5
    else:
        raise AssertionError("the failed close was not reported")
    marked = {p for p in range(6) if (tmp_path / f"t-{p}" / CLEAN_SHUTDOWN_MARKER).exists()}
    assert marked == {0, 1, 2, 4, 5}
