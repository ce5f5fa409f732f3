"""Every batch replayed or fetched has passed its CRC-32C check, even when recovery trusted it unread."""

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage import segment_reads
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.errors import CorruptLogError, LogClosedError
from groupcoord.storage.log_manager import LogManager
from groupcoord.storage.recovery import CLEAN_SHUTDOWN_MARKER
from tests.storage.conftest import all_records

CONFIG = LogConfig.from_topic_configs({"index.interval.bytes": "256"})
VALUE = b"committed-offset-29060"


async def written_then_closed_cleanly(data_dir, batches: int = 40) -> None:
    manager = LogManager(data_dir, FsyncPolicy.ALWAYS, CONFIG)
    log = await manager.get_or_create("state", 0)
    for i in range(batches):
        await log.append(encode_batch([(b"key-%d" % i, VALUE, ())], base_timestamp=1000 + i))
    await manager.close()


def flip_a_value_byte(partition_dir, occurrence: int = 10) -> int:
    """Flip one byte inside the value of the ``occurrence``-th batch; returns its byte position in the file."""
    segment = next(partition_dir.glob("*.log"))
    data = bytearray(segment.read_bytes())
    at = -1
    for _ in range(occurrence + 1):
        at = data.index(VALUE, at + 1)
    data[at + len(VALUE) - 1] ^= 0x01
    segment.write_bytes(bytes(data))
    return at


async def test_a_flipped_byte_after_a_clean_shutdown_is_refused_on_replay_and_the_partition_goes_offline(tmp_path):
    await written_then_closed_cleanly(tmp_path)
    assert (tmp_path / "state-0" / CLEAN_SHUTDOWN_MARKER).exists()
    flip_a_value_byte(tmp_path / "state-0")

    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, CONFIG)
    opened = await manager.open_existing()
    log = opened[("state", 0)]  # a clean shutdown: recovery trusted the segment without reading it
    with pytest.raises(CorruptLogError, match="CRC-32C mismatch in batch with base offset 10") as raised:
        await all_records(log)
    assert raised.value.segment.name == "00000000000000000000.log"
    assert ("state", 0) in manager.refused and manager.get("state", 0) is None
    with pytest.raises(CorruptLogError):
        await log.read(0, 1 << 20)  # a fetch of the same partition is refused too
    with pytest.raises(LogClosedError, match="offline"):
        await log.append(encode_batch([(b"k", b"v", ())]))
    with pytest.raises(CorruptLogError):
        await manager.get_or_create("state", 0)
    await manager.close()


async def test_a_fetch_from_the_middle_checks_what_it_serves(tmp_path):
    await written_then_closed_cleanly(tmp_path)
    flip_a_value_byte(tmp_path / "state-0", occurrence=30)
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, CONFIG)
    log = (await manager.open_existing())[("state", 0)]
    assert len(await log.read(25, 200, min_one=True)) > 0, "batches before the damage are served"
    with pytest.raises(CorruptLogError, match="base offset 30"):
        await log.read(28, 1 << 20)
    await manager.close()


@pytest.fixture
def checked(monkeypatch) -> list[int]:
    """The length of every span the segment reader CRC-checks from here on, in order."""
    spans: list[int] = []
    real = segment_reads.crc32c

    def counting(data, value=0):
        spans.append(len(data))
        return real(data, value)

    monkeypatch.setattr(segment_reads, "crc32c", counting)
    return spans


async def test_each_batch_is_checked_once_however_often_it_is_read(tmp_path, checked):
    await written_then_closed_cleanly(tmp_path)
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, CONFIG)
    log = (await manager.open_existing())[("state", 0)]
    assert len(await all_records(log)) == 40
    assert len(checked) == 40
    assert len(await all_records(log)) == 40
    await log.read(20, 1 << 20)
    assert len(checked) == 40, "verified bytes are not checked again"
    await manager.close()


@pytest.mark.parametrize("fsync", [FsyncPolicy.BATCH, FsyncPolicy.NEVER])
async def test_bytes_this_process_appended_are_served_without_a_second_check(tmp_path, checked, fsync):
    """Appended batches passed their check on the way in (produce's validation; the rest are encoded here):
    reading them back does not CRC them again. After a restart the same bytes are checked when first read."""
    manager = LogManager(tmp_path, fsync, CONFIG)
    log = await manager.get_or_create("state", 0)
    for i in range(40):
        await log.append(encode_batch([(b"key-%d" % i, VALUE, ())], base_timestamp=1000 + i))
    assert len(await all_records(log)) == 40
    await log.read(20, 1 << 20)
    assert checked == []
    await manager.close()
    manager = LogManager(tmp_path, fsync, CONFIG)
    log = (await manager.open_existing())[("state", 0)]
    assert len(await all_records(log)) == 40
    assert len(checked) == 40
    await manager.close()


async def test_the_cleaner_refuses_a_corrupt_batch_and_takes_the_partition_offline(tmp_path):
    from tests.storage.conftest import small_config

    compacted = small_config(cleanup_policy="compact", segment_bytes=1024, min_cleanable_dirty_ratio=0.01)
    manager = LogManager(tmp_path, FsyncPolicy.NEVER, compacted)
    log = await manager.get_or_create("state", 0, compacted)
    for i in range(40):
        await log.append(encode_batch([(b"key-%d" % (i % 4), VALUE, ())], base_timestamp=1000 + i))
    await manager.close()
    first = sorted((tmp_path / "state-0").glob("*.log"))[0]
    data = bytearray(first.read_bytes())
    data[data.index(VALUE) + 3] ^= 0x01
    first.write_bytes(bytes(data))

    manager = LogManager(tmp_path, FsyncPolicy.NEVER, compacted)
    await manager.open_existing()
    assert await manager.clean_filthiest() == 0
    assert ("state", 0) in manager.refused and manager.get("state", 0) is None
    assert first.read_bytes() == bytes(data), "the corrupt segment is left as it was"
    await manager.close()
