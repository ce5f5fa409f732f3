"""Opening a log after a crash: torn tails are cut, corruption in the middle is refused."""

import os
import shutil

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.log import CLEAN_SHUTDOWN_MARKER, PartitionLog
from tests.storage.conftest import all_records, small_config

CONFIG = small_config(segment_bytes=1 << 20, index_interval_bytes=64)


def batches(n: int) -> list[bytes]:
    return [encode_batch([(b"k%d" % i, b"value-%d" % i, ())] * 2, base_offset=2 * i, base_timestamp=100 + i)
            for i in range(n)]


def write_segment(directory, data: bytes, base_offset: int = 0) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{base_offset:020d}.log").write_bytes(data)


async def test_truncating_the_last_batch_at_every_byte_keeps_everything_before_it(tmp_path):
    parts = batches(4)
    intact = b"".join(parts[:3])
    for cut in range(len(intact) + 1, len(intact) + len(parts[3])):
        directory = tmp_path / f"cut-{cut}"
        write_segment(directory, (intact + parts[3])[:cut])
        log = await PartitionLog.open(directory, CONFIG, FsyncPolicy.NEVER)
        assert log.log_end_offset == 6
        assert [r.offset for r in await all_records(log)] == list(range(6))
        assert (directory / "00000000000000000000.log").stat().st_size == len(intact)
        assert (await log.append(encode_batch([(b"new", b"1", ())]))).base_offset == 6
        await log.close()


async def test_zero_filled_tail_after_a_crash_is_cut(tmp_path):
    directory = tmp_path / "zeros-0"
    write_segment(directory, b"".join(batches(3)) + bytes(500))
    log = await PartitionLog.open(directory, CONFIG, FsyncPolicy.NEVER)
    assert log.log_end_offset == 6
    await log.close()


async def test_a_corrupt_batch_followed_by_valid_ones_is_refused_with_its_location(tmp_path):
    directory = tmp_path / "orders-3"
    parts = batches(5)
    data = bytearray(b"".join(parts))
    bad_position = len(parts[0]) + len(parts[1])
    data[bad_position + 70] ^= 0xFF  # inside the records of the third batch
    write_segment(directory, bytes(data))
    with pytest.raises(CorruptLogError) as caught:
        await PartitionLog.open(directory, CONFIG, FsyncPolicy.NEVER)
    error = caught.value
    assert error.partition == "orders-3" and error.position == bad_position
    assert error.segment.name == "00000000000000000000.log"
    assert "orders-3" in str(error) and "00000000000000000000.log" in str(error) and str(bad_position) in str(error)
    assert (directory / "00000000000000000000.log").read_bytes() == bytes(data), "nothing was cut"


async def test_a_broken_length_field_in_the_middle_is_refused(tmp_path):
    directory = tmp_path / "orders-4"
    parts = batches(4)
    data = bytearray(b"".join(parts))
    data[len(parts[0]) + 8:len(parts[0]) + 12] = (10_000).to_bytes(4, "big")
    write_segment(directory, bytes(data))
    with pytest.raises(CorruptLogError, match="valid batch follows"):
        await PartitionLog.open(directory, CONFIG, FsyncPolicy.NEVER)


async def test_a_torn_older_segment_with_data_after_it_is_refused(tmp_path):
    directory = tmp_path / "orders-5"
    parts = batches(4)
    write_segment(directory, parts[0] + parts[1][:-5], base_offset=0)
    write_segment(directory, parts[2] + parts[3], base_offset=4)
    with pytest.raises(CorruptLogError, match="later segments hold data"):
        await PartitionLog.open(directory, CONFIG, FsyncPolicy.NEVER)


async def test_clean_close_leaves_a_marker_that_the_next_open_consumes(open_log, log_dir):
    log = await open_log(CONFIG)
    await log.append(b"".join(encode_batch([(b"k", b"v", ())]) for _ in range(3)))
    await log.close()
    assert (log_dir / CLEAN_SHUTDOWN_MARKER).exists()
    reopened = await open_log(CONFIG)
    assert not (log_dir / CLEAN_SHUTDOWN_MARKER).exists(), "a crash from now on must count as unclean"
    assert reopened.log_end_offset == 3


async def test_missing_or_garbage_indexes_are_rebuilt_from_the_log(open_log, log_dir):
    config = small_config(segment_bytes=2048, index_interval_bytes=64)
    log = await open_log(config)
    for i in range(40):
        await log.append(encode_batch([(b"k%d" % i, b"v" * 50, ())], base_timestamp=1000 + i))
    await log.close()
    expected = {p.name: p.read_bytes() for p in log_dir.glob("*index")}
    index_files = sorted(log_dir.glob("*.index"))
    index_files[0].unlink()
    index_files[1].write_bytes(b"\xff" * 24)
    reopened = await open_log(config)
    for offset in range(40):
        assert (await reopened.read(offset, 1))[:8] == offset.to_bytes(8, "big")
    await reopened.close()
    assert {p.name: p.read_bytes() for p in log_dir.glob("*index")} == expected


async def test_unclean_open_rebuilds_the_same_indexes_a_clean_close_writes(open_log, log_dir, tmp_path):
    config = small_config(segment_bytes=2048, index_interval_bytes=64)
    log = await open_log(config)
    for i in range(40):
        await log.append(encode_batch([(b"k%d" % i, b"v" * 50, ())], base_timestamp=1000 + i))
    await log.close()
    clean = {p.name: p.read_bytes() for p in log_dir.glob("*index")}
    crashed = tmp_path / "crashed-0"
    shutil.copytree(log_dir, crashed)
    (crashed / CLEAN_SHUTDOWN_MARKER).unlink()
    for path in crashed.glob("*index"):
        path.unlink()
    recovered = await open_log(config, directory=crashed)
    await recovered.close()
    assert {p.name: p.read_bytes() for p in crashed.glob("*index")} == clean


async def test_recovery_cuts_and_deletes_empty_segments_after_a_torn_tail(tmp_path):
    directory = tmp_path / "orders-6"
    parts = batches(3)
    write_segment(directory, parts[0] + parts[1][:20], base_offset=0)
    write_segment(directory, b"", base_offset=4)
    log = await PartitionLog.open(directory, CONFIG, FsyncPolicy.NEVER)
    assert log.log_end_offset == 2 and [s.base_offset for s in log.segments] == [0]
    assert sorted(os.listdir(directory)) == ["00000000000000000000.log"]
    await log.close()


class CrcCounter:
    """Counts CRC checks per segment file during recovery."""

    def __init__(self, real) -> None:
        self.real = real
        self.checked_positions = 0

    def __call__(self, buf, pos=0):
        self.checked_positions += 1
        return self.real(buf, pos)


@pytest.mark.parametrize(("policy", "old_segments_rechecked"), [(FsyncPolicy.ALWAYS, False),
                                                                (FsyncPolicy.NEVER, True)])
async def test_after_a_crash_only_data_past_the_recovery_point_is_rechecked(open_log, log_dir, monkeypatch,
                                                                            policy, old_segments_rechecked):
    from groupcoord.storage import segment as segment_module

    config = small_config(segment_bytes=2048, index_interval_bytes=64)
    log = await open_log(config, policy)
    for i in range(60):
        await log.append(encode_batch([(b"k%d" % i, b"v" * 50, ())], base_timestamp=1000 + i))
    active_batches = 60 - log.active_segment.base_offset  # one batch per offset
    crashed = log_dir.with_name("crashed-0")
    shutil.copytree(log_dir, crashed)  # the process "dies" here: no marker, active indexes unwritten
    counter = CrcCounter(segment_module.verify_crc)
    monkeypatch.setattr(segment_module, "verify_crc", counter)
    recovered = await open_log(config, policy, directory=crashed)
    assert recovered.log_end_offset == 60
    assert [r.offset for r in await all_records(recovered)] == list(range(60))
    if old_segments_rechecked:
        assert counter.checked_positions == 60
    else:
        assert counter.checked_positions == active_batches
