"""Appending to and reading from a partition log, across segment rolls and reopenings."""

import asyncio
import os
import time

import pytest

from groupcoord.protocol.record_batch import decode_records, encode_batch, iter_batches, parse_header
from groupcoord.storage.config import FsyncPolicy
from groupcoord.storage.errors import LogClosedError
from tests.storage.conftest import all_records, small_config


def batch(i: int, count: int = 3, size: int = 60, ts: int | None = None) -> bytes:
    return encode_batch([(b"key-%d" % i, b"%d:" % i + b"x" * size, ()) for _ in range(count)],
                        base_timestamp=ts if ts is not None else 1_000 + i)


async def test_appends_get_consecutive_offsets_whatever_the_producer_sent(open_log):
    log = await open_log()
    first = await log.append(encode_batch([(b"a", b"1", ())] * 2, base_offset=999))
    second = await log.append(batch(1) + batch(2))
    assert (first.base_offset, first.last_offset) == (0, 1)
    assert (second.base_offset, second.last_offset) == (2, 7)
    assert log.log_end_offset == log.high_watermark == 8
    assert [r.offset for r in await all_records(log)] == list(range(8))


async def test_round_trip_across_segment_rolls_and_a_reopen(open_log, log_dir):
    log = await open_log()
    for i in range(120):
        await log.append(batch(i))
    assert len(log.segments) > 5
    names = sorted(p.name for p in log_dir.glob("*.log"))
    assert names[0] == "00000000000000000000.log" and all(len(n) == 24 for n in names)
    expected = [(r.offset, r.value) for r in await all_records(log)]
    assert [offset for offset, _ in expected] == list(range(360))
    await log.close()
    reopened = await open_log()
    assert reopened.log_end_offset == 360
    assert [(r.offset, r.value) for r in await all_records(reopened)] == expected
    for offset in (0, 1, 179, 180, 359):
        data = await reopened.read(offset, 1)
        header = parse_header(data)
        assert header.base_offset <= offset <= header.last_offset


async def test_every_offset_reads_back_from_the_batch_holding_it(open_log):
    log = await open_log(small_config(segment_bytes=2048, index_interval_bytes=100))
    for i in range(60):
        await log.append(batch(i, count=1 + i % 4))
    for offset in range(log.log_end_offset):
        data = await log.read(offset, 10_000)
        first = parse_header(data)
        assert first.base_offset <= offset <= first.last_offset
        assert decode_records(data)[offset - first.base_offset].offset == offset


async def test_read_respects_max_bytes_and_min_one(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(encode_batch([(b"big", b"x" * 3000, ())]))
    for i in range(10):
        await log.append(batch(i, count=1, size=10))
    whole = await log.read(0, 100)
    assert parse_header(whole).records_count == 1 and len(whole) > 3000
    assert await log.read(0, 100, min_one=False) == b""
    small = await log.read(1, 300)
    sizes = [h.size for _, h in iter_batches(small)]
    assert sum(sizes) <= 300 and len(sizes) >= 2
    assert await log.read(log.log_end_offset, 1000) == b""


async def test_a_read_as_a_view_answers_the_same_batches_without_copying_them(open_log):
    """``view=True`` (the fetch path) may answer a memoryview of what was read, cut before a partial last
    batch, instead of a copy: the same bytes under every limit, min_one's whole first batch included."""
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(encode_batch([(b"big", b"x" * 3000, ())]))
    for i in range(10):
        await log.append(batch(i, count=1, size=10))
    for offset, max_bytes, min_one in ((0, 100, True), (0, 100, False), (1, 300, True), (0, 3500, True),
                                       (0, 1 << 20, True), (5, 1 << 20, False), (log.log_end_offset, 1000, True)):
        plain = await log.read(offset, max_bytes, min_one=min_one)
        view = await log.read(offset, max_bytes, min_one=min_one, view=True)
        assert bytes(view) == plain
    assert type(await log.read(1, 300, view=True)) is memoryview  # cut inside the batch after the last whole one


async def test_offsets_by_timestamp_use_the_time_index(open_log):
    log = await open_log(small_config(segment_bytes=2048, index_interval_bytes=100))
    for i in range(100):
        await log.append(encode_batch([(b"k", b"v" * 40, ())] * 2, timestamps=[10_000 + 10 * i, 10_005 + 10 * i]))
    assert await log.offset_for_timestamp(0) == (0, 10_000, 0)
    assert await log.offset_for_timestamp(10_005) == (1, 10_005, 0)
    assert await log.offset_for_timestamp(10_006) == (2, 10_010, 0)
    assert await log.offset_for_timestamp(10_995) == (199, 10_995, 0)
    assert await log.offset_for_timestamp(11_000) is None
    await log.close()
    reopened = await open_log(small_config(segment_bytes=2048, index_interval_bytes=100))
    assert await reopened.offset_for_timestamp(10_506) == (102, 10_510, 0)


async def test_listeners_hear_about_each_durable_append(open_log):
    log = await open_log(fsync=FsyncPolicy.BATCH)
    seen = []
    log.add_append_listener(lambda l: seen.append(l.high_watermark))
    await log.append(batch(1))
    await log.append(batch(2, count=1))
    assert seen == [3, 4]


async def test_segment_ms_rolls_an_old_active_segment(open_log):
    log = await open_log(small_config(segment_ms=60_000, segment_bytes=1 << 20))
    await log.append(batch(1))
    await log.append(batch(2))
    assert len(log.segments) == 1
    log.active_segment.rolling_timestamp = int(time.time() * 1000) - 61_000
    await log.append(batch(3))
    assert [s.base_offset for s in log.segments] == [0, 6]


async def test_a_compacted_log_rolls_within_max_compaction_lag(open_log):
    """The cleaner never touches the active segment, so a compacted log rolls once it is older than
    max.compaction.lag.ms even though segment.ms (7 days) has not passed."""
    log = await open_log(small_config(cleanup_policy="compact", max_compaction_lag_ms=60_000, segment_bytes=1 << 20))
    await log.append(batch(1))
    log.active_segment.rolling_timestamp = int(time.time() * 1000) - 59_000
    await log.append(batch(2))
    assert len(log.segments) == 1
    log.active_segment.rolling_timestamp = int(time.time() * 1000) - 61_000
    await log.append(batch(3))
    assert [s.base_offset for s in log.segments] == [0, 6]


async def test_max_compaction_lag_does_not_roll_a_log_that_is_not_compacted(open_log):
    log = await open_log(small_config(max_compaction_lag_ms=60_000, segment_bytes=1 << 20))
    await log.append(batch(1))
    log.active_segment.rolling_timestamp = int(time.time() * 1000) - 61_000
    await log.append(batch(2))
    assert len(log.segments) == 1


async def test_log_append_time_topics_stamp_the_broker_time(open_log):
    log = await open_log(small_config(message_timestamp_type="LogAppendTime"))
    before = int(time.time() * 1000)
    result = await log.append(batch(1, ts=5))
    assert result.log_append_time >= before and result.max_timestamp == result.log_append_time
    header = parse_header(await log.read(0, 1000))
    assert header.timestamp_type == 1 and header.max_timestamp == result.log_append_time


async def test_appending_with_own_offsets_must_continue_the_log(open_log):
    log = await open_log()
    await log.append(encode_batch([(b"a", b"1", ())], base_offset=5), assign_offsets=False)
    assert log.log_end_offset == 6
    with pytest.raises(ValueError, match="below the log end offset"):
        await log.append(encode_batch([(b"a", b"1", ())], base_offset=3), assign_offsets=False)


async def test_replay_starts_at_the_batch_holding_the_start_offset(open_log):
    log = await open_log()
    for i in range(10):
        await log.append(batch(i))
    replayed = [header.base_offset async for header, _ in log.batches(13)]
    assert replayed == list(range(12, 30, 3))


async def test_truncate_fully_empties_the_log_and_restarts_it(open_log, log_dir):
    log = await open_log()
    for i in range(40):
        await log.append(batch(i))
    await log.truncate_fully(500)
    assert (log.log_start_offset, log.log_end_offset) == (500, 500)
    assert sorted(p for p in os.listdir(log_dir) if not p.startswith("recovery-point")) == [
        "00000000000000000500.log"]
    assert (await log.append(batch(1))).base_offset == 500


async def test_closed_and_deleted_logs(open_log, log_dir):
    log = await open_log()
    await log.append(batch(1))
    await log.delete()
    assert not log_dir.exists()
    with pytest.raises(LogClosedError):
        await log.append(batch(2))


@pytest.mark.parametrize("policy", list(FsyncPolicy))
async def test_closing_with_appends_in_flight_keeps_every_acknowledged_one(open_log, policy):
    log = await open_log(fsync=policy)
    appends = [asyncio.create_task(log.append(batch(i, count=1))) for i in range(100)]
    await asyncio.sleep(0)
    await log.close()
    late = asyncio.create_task(log.append(batch(999, count=1)))
    outcomes = await asyncio.gather(*appends, late, return_exceptions=True)
    acknowledged = [o.last_offset for o in outcomes if not isinstance(o, BaseException)]
    assert isinstance(outcomes[-1], LogClosedError)
    reopened = await open_log(fsync=policy)
    assert set(acknowledged) <= {r.offset for r in await all_records(reopened)}


@pytest.mark.parametrize("count", [2, 5, 1500])
def test_write_parts_at_writes_the_buffers_back_to_back(tmp_path, count):
    """A run of coalesced appends goes out in pwritev calls (IOV_MAX buffers at most each), not joined first."""
    from groupcoord.storage.segment import Segment

    segment = Segment.create(tmp_path, 0)
    try:
        buffers = [bytearray(bytes([i % 251]) * (1 + i % 7)) for i in range(count)]
        segment.write_at(0, b"head")
        segment.write_parts_at(4, buffers)
        assert (tmp_path / "00000000000000000000.log").read_bytes() == b"head" + b"".join(buffers)
    finally:
        segment.close()


@pytest.mark.parametrize("fsync", [FsyncPolicy.BATCH, FsyncPolicy.NEVER])
async def test_large_batches_appended_from_immutable_bytes_are_stamped_and_stored_whole(open_log, fsync):
    """A single large batch given as bytes is written as a stamped 16-byte prefix plus the caller's bytes
    (no copy of the rest): the stored batches carry their assigned offsets and leader epoch, pass their CRC,
    and hold the records as sent, concurrent appends coalesced into one write included."""
    from groupcoord.protocol.record_batch import verify_crc

    log = await open_log(small_config(segment_bytes=1 << 22), fsync=fsync)
    sent = [bytes(encode_batch([(b"k%d" % i, bytes([i]) * 40_000, ())] * 2)) for i in range(6)]
    results = await asyncio.gather(*(log.append(batch_bytes) for batch_bytes in sent))
    assert [r.base_offset for r in results] == [0, 2, 4, 6, 8, 10]
    data = await log.read(0, 1 << 22)
    stored = [(pos, header) for pos, header in iter_batches(data)]  # verify=True: every CRC checks
    assert [h.base_offset for _, h in stored] == [0, 2, 4, 6, 8, 10]
    for i, ((pos, header), original) in enumerate(zip(stored, sent)):
        assert verify_crc(data, pos)
        assert data[pos + 16:pos + header.size] == original[16:]
        assert [r.value for r in decode_records(data[pos:pos + header.size])] == [bytes([i]) * 40_000] * 2
