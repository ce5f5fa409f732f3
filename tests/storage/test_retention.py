"""Delete retention: whole old segments go, the log start moves forward, the active segment stays."""

import time

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.retention import apply_retention
from tests.storage.conftest import all_records, small_config

HOUR_MS = 3_600_000


async def append_aged(log, count: int, timestamp: int) -> None:
    for i in range(count):
        await log.append(encode_batch([(b"k%d" % i, b"v" * 80, ())], base_timestamp=timestamp))


async def test_segments_older_than_retention_ms_are_deleted(open_log):
    log = await open_log(small_config(segment_bytes=1024, retention_ms=HOUR_MS))
    now = int(time.time() * 1000)
    await append_aged(log, 30, now - 3 * HOUR_MS)
    await log.roll()
    first_fresh = log.log_end_offset
    await append_aged(log, 30, now)
    removed = await apply_retention(log, now_ms=now)
    assert removed > 0
    assert log.log_start_offset == first_fresh
    assert [r.offset for r in await all_records(log)] == list(range(first_fresh, 60))
    assert (await log.read(0, 1000))[:8] == first_fresh.to_bytes(8, "big"), "reads below the start begin at it"


async def test_the_active_segment_survives_even_when_expired(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20, retention_ms=HOUR_MS))
    await append_aged(log, 5, int(time.time() * 1000) - 3 * HOUR_MS)
    assert await apply_retention(log) == 0
    assert len(await all_records(log)) == 5


async def test_retention_bytes_keeps_the_newest_data_within_the_limit(open_log):
    log = await open_log(small_config(segment_bytes=1024, retention_bytes=3000, retention_ms=-1))
    await append_aged(log, 100, int(time.time() * 1000))
    total_before = log.size_bytes
    await apply_retention(log)
    non_active = sum(s.size for s in log.segments[:-1])
    assert non_active + log.active_segment.size == log.size_bytes < total_before
    assert log.size_bytes - log.segments[0].size < 3000 <= log.size_bytes + 1024
    records = await all_records(log)
    assert records[-1].offset == 99 and records[0].offset == log.log_start_offset > 0


async def test_compact_only_topics_ignore_retention(open_log):
    log = await open_log(small_config(segment_bytes=1024, retention_ms=1, cleanup_policy="compact"))
    await append_aged(log, 30, 0)
    assert await apply_retention(log) == 0 and log.log_start_offset == 0
