"""Compaction: the latest value per key survives, tombstones expire, and a crash mid-way loses nothing."""

import asyncio
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol.compression import CompressionType
from groupcoord.protocol.record_batch import decode_records, encode_batch, parse_header
from groupcoord.storage import cleaner as cleaner_module
from groupcoord.storage import swap as swap_module
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.config import FsyncPolicy
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.observer import NullObserver
from tests.storage.conftest import all_records, small_config

TOMBSTONE_RETENTION_MS = 3_600_000
COMPACTED = small_config(cleanup_policy="compact", segment_bytes=1024, index_interval_bytes=128,
                         delete_retention_ms=TOMBSTONE_RETENTION_MS)


async def fill(log: PartitionLog, ops: list[tuple[bytes, bytes | None]], per_batch: int = 3) -> dict[bytes, tuple[int, bytes | None]]:
    """Append (key, value) ops; return the last (offset, value) written per key."""
    latest: dict[bytes, tuple[int, bytes | None]] = {}
    for start in range(0, len(ops), per_batch):
        chunk = ops[start:start + per_batch]
        result = await log.append(encode_batch([(k, v, ()) for k, v in chunk]))
        for i, (key, value) in enumerate(chunk):
            latest[key] = (result.base_offset + i, value)
    return latest


def age_segments(directory: Path, by_ms: int) -> None:
    past = time.time() - by_ms / 1000
    for path in directory.glob("*.log"):
        os.utime(path, (past, past))


ops_strategy = st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c", b"d", b"e", b"f", b"g"]),
                                  st.none() | st.binary(min_size=1, max_size=60)), min_size=1, max_size=120)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy, per_batch=st.integers(min_value=1, max_value=5), expire_tombstones=st.booleans())
def test_compaction_keeps_exactly_the_latest_value_per_key(tmp_path_factory, ops, per_batch, expire_tombstones):
    directory = tmp_path_factory.mktemp("prop") / "compacted-0"

    async def scenario() -> None:
        log = await PartitionLog.open(directory, COMPACTED, FsyncPolicy.NEVER)
        latest = await fill(log, ops, per_batch)
        end = log.log_end_offset
        await log.roll()
        if expire_tombstones:
            age_segments(directory, 2 * TOMBSTONE_RETENTION_MS)
        await LogCleaner().clean(log)
        survivors = await all_records(log)
        expected = {key: (offset, value) for key, (offset, value) in latest.items()
                    if not (expire_tombstones and value is None)}
        assert {r.key: (r.offset, r.value) for r in survivors} == expected
        assert len(survivors) == len(expected), "a key survived twice"
        assert log.log_end_offset == end
        await log.close()
        reopened = await PartitionLog.open(directory, COMPACTED, FsyncPolicy.NEVER)
        assert {r.key: (r.offset, r.value) for r in await all_records(reopened)} == expected
        await reopened.close()

    asyncio.run(scenario())


async def test_tombstones_stay_until_delete_retention_has_passed(open_log, log_dir):
    log = await open_log(COMPACTED)
    await fill(log, [(b"user-1", b"alice"), (b"user-2", b"bob"), (b"user-1", None)] * 10)
    await log.roll()
    await LogCleaner().clean(log)
    assert {(r.key, r.value) for r in await all_records(log)} == {(b"user-1", None), (b"user-2", b"bob")}
    age_segments(log_dir, TOMBSTONE_RETENTION_MS - 60_000)
    await LogCleaner().clean(log)
    assert (b"user-1", None) in {(r.key, r.value) for r in await all_records(log)}
    age_segments(log_dir, TOMBSTONE_RETENTION_MS + 60_000)
    stats = await LogCleaner().clean(log)
    assert stats.tombstones_dropped == 1
    assert {(r.key, r.value) for r in await all_records(log)} == {(b"user-2", b"bob")}


async def test_the_active_segment_is_never_compacted(open_log):
    log = await open_log(COMPACTED)
    await fill(log, [(b"k", b"old-%d" % i) for i in range(40)])
    active_before = (log.active_segment.base_offset, log.active_segment.size)
    await LogCleaner().clean(log)
    assert (log.active_segment.base_offset, log.active_segment.size) == active_before
    values = [r.value for r in await all_records(log)]
    assert values[-1] == b"old-39" and len(values) > 1, "records in the active segment are untouched"


async def test_surviving_batches_keep_offsets_and_producer_state(open_log):
    log = await open_log(COMPACTED)
    await log.append(encode_batch([(b"x", b"1", ()), (b"y", b"1", ()), (b"z", b"1", ())],
                                  producer_id=77, producer_epoch=2, base_sequence=10))
    await log.append(encode_batch([(b"x", b"2", ()), (b"y", b"2", ()), (b"z", b"2", ())],
                                  producer_id=88, producer_epoch=1, base_sequence=0))
    await log.append(encode_batch([(b"y", b"3", ())], producer_id=-1))
    await log.roll()
    await log.append(encode_batch([(b"w", b"1", ())]))
    await LogCleaner().clean(log)
    headers = [header async for header, _ in log.batches()]
    assert [(h.base_offset, h.last_offset, h.producer_id, h.base_sequence, h.records_count) for h in headers] == [
        (0, 2, 77, 10, 0),    # emptied but kept for its producer
        (3, 5, 88, 0, 2),     # x and z survive, offsets kept
        (6, 6, -1, -1, 1),
        (7, 7, -1, -1, 1),
    ]
    raw = await log.read(3, 1000)
    assert [(r.offset, r.key) for r in decode_records(raw, 0, parse_header(raw))] == [(3, b"x"), (5, b"z")]


async def test_cleaning_twice_merges_small_cleaned_segments(open_log):
    log = await open_log(COMPACTED)
    await fill(log, [(b"k%d" % (i % 3), b"v" * 30) for i in range(200)])
    await log.roll()
    await LogCleaner().clean(log)
    before = len(log.segments)
    await LogCleaner().clean(log)
    assert len(log.segments) < before
    assert sorted(r.key for r in await all_records(log)) == [b"k0", b"k1", b"k2"]


class SimulatedCrash(Exception):
    pass


async def crash_during_clean(log: PartitionLog, monkeypatch, where: str) -> None:
    real_rename = os.rename

    def crash(*args, **kwargs):
        raise SimulatedCrash(where)

    def rename_then_maybe_crash(src, dst):
        if str(src).endswith(".swap"):
            raise SimulatedCrash(where)
        return real_rename(src, dst)

    if where == "before-commit":
        monkeypatch.setattr(cleaner_module, "commit_swap", crash)
    elif where == "after-commit":
        monkeypatch.setattr(cleaner_module, "install_swap", crash)
    else:
        monkeypatch.setattr(swap_module.os, "rename", rename_then_maybe_crash)
    with pytest.raises(SimulatedCrash):
        await LogCleaner().clean(log)
    monkeypatch.undo()
    log._closed = True  # the process "dies": no clean-shutdown marker, no index files
    log._close_files()
    log._shutdown_executor()


@pytest.mark.parametrize("where", ["before-commit", "after-commit", "old-segments-deleted"])
async def test_a_crash_in_the_middle_of_compaction_loses_nothing(open_log, log_dir, monkeypatch, where):
    config = small_config(cleanup_policy="compact", segment_bytes=1 << 20)
    log = await open_log(config)
    latest: dict = {}
    for part in range(3):  # three segments, small enough to be cleaned as one group
        latest |= await fill(log, [(b"k%d" % (i % 5), b"value-%d-%d" % (part, i)) for i in range(50)])
        await log.roll()
    everything_before = [(r.offset, r.key, r.value) for r in await all_records(log)]
    await crash_during_clean(log, monkeypatch, where)
    leftovers = sorted(p.name for p in log_dir.iterdir() if ".cleaned" in p.name or ".swap" in p.name)
    assert leftovers, "the crash left compaction files behind"
    reopened = await open_log(config)
    records = [(r.offset, r.key, r.value) for r in await all_records(reopened)]
    if where == "before-commit":
        assert records == everything_before, "rolled back to the uncompacted log"
    else:
        assert {key: (offset, value) for offset, key, value in records} == latest
        assert len(records) == len(latest), "finished: superseded values are gone"
    assert not [p for p in log_dir.iterdir() if ".cleaned" in p.name or ".swap" in p.name]
    assert reopened.log_end_offset == 150


async def test_dirty_ratio_decides_when_the_background_cleaner_runs(open_log):
    log = await open_log(small_config(cleanup_policy="compact", segment_bytes=1024, min_cleanable_dirty_ratio=0.5))
    cleaner = LogCleaner()
    assert not cleaner.needs_cleaning(log)
    await fill(log, [(b"k", b"v" * 40)] * 60)
    assert cleaner.needs_cleaning(log)
    await cleaner.clean(log)
    assert not cleaner.needs_cleaning(log)


async def test_delete_only_topics_are_not_compacted(open_log):
    log = await open_log(small_config(segment_bytes=1024))
    await fill(log, [(b"k", b"v" * 40)] * 60)
    stats = await LogCleaner().clean(log)
    assert stats.segments_cleaned == 0 and len(await all_records(log)) == 60


async def test_a_compressed_batch_that_loses_records_keeps_its_codec(open_log):
    log = await open_log(COMPACTED)
    await log.append(encode_batch([(b"a", b"1", ()), (b"b", b"1", ())], compression=CompressionType.ZSTD))
    await log.append(encode_batch([(b"a", b"2", ())]))
    await log.roll()
    await LogCleaner().clean(log)
    first = await log.read(0, 1000)
    header = parse_header(first)
    assert header.compression == CompressionType.ZSTD and header.last_offset == 1
    assert [(r.offset, r.key, r.value) for r in decode_records(first)] == [(1, b"b", b"1")]


async def test_the_observer_hears_about_each_cleaning_pass(log_dir):
    seen = []

    class Observer(NullObserver):
        def on_clean(self, stats):
            seen.append(stats)

    log = await PartitionLog.open(log_dir, COMPACTED, FsyncPolicy.NEVER, observer=Observer())
    await fill(log, [(b"k", b"v" * 40)] * 60)
    await log.roll()
    stats = await LogCleaner().clean(log)
    await log.close()
    assert seen == [stats] and stats.records_read == 60 and stats.records_kept == 1


# ---- max.compaction.lag.ms ----------------------------------------------------------------
T0 = 1_700_000_000_000
MINUTE = 60_000


async def write_at(log: PartitionLog, timestamp: int, ops: list[tuple[bytes, bytes]]) -> None:
    """One single-record batch per op, all stamped ``timestamp`` (CreateTime)."""
    for key, value in ops:
        await log.append(encode_batch([(key, value, ())], base_timestamp=timestamp))


async def mostly_clean_log(open_log, directory: Path | None = None, **overrides) -> tuple[PartitionLog, LogCleaner]:
    """40 distinct keys compacted once, then 3 overwrites in a rolled segment: a dirty ratio far below 0.5."""
    config = small_config(cleanup_policy="compact", segment_bytes=1024, min_cleanable_dirty_ratio=0.5, **overrides)
    log = await open_log(config, directory=directory)
    cleaner = LogCleaner()
    await write_at(log, T0, [(b"key-%02d" % i, b"v" * 40) for i in range(40)])
    await log.roll()
    await cleaner.clean(log, now_ms=T0)
    await write_at(log, T0 + MINUTE, [(b"key-%02d" % i, b"new" * 10) for i in range(3)])
    await log.roll()
    return log, cleaner


async def test_a_log_below_the_dirty_ratio_is_left_alone(open_log):
    log, cleaner = await mostly_clean_log(open_log)
    target = cleaner.to_clean(log, now_ms=T0 + 365 * 24 * 60 * MINUTE)
    assert 0 < target.cleanable_ratio < 0.5 and not target.need_compaction_now
    assert not cleaner.needs_cleaning(log, now_ms=T0 + 365 * 24 * 60 * MINUTE)
    assert cleaner.grab_filthiest([log], now_ms=T0 + 365 * 24 * 60 * MINUTE) is None


async def test_max_compaction_lag_forces_a_log_below_the_dirty_ratio_to_be_compacted(open_log):
    log, cleaner = await mostly_clean_log(open_log, max_compaction_lag_ms=10 * MINUTE)
    assert not cleaner.needs_cleaning(log, now_ms=T0 + 10 * MINUTE), "the dirty records are only 9 minutes old"
    due = T0 + 12 * MINUTE
    target = cleaner.to_clean(log, now_ms=due)
    assert target.cleanable_ratio < 0.5 and target.compaction_delay_ms == MINUTE
    assert cleaner.grab_filthiest([log], now_ms=due) == target
    stats = await cleaner.clean(log, now_ms=due)
    assert stats.records_read == 43 and stats.records_kept == 40
    assert {r.key: r.value for r in await all_records(log)}[b"key-00"] == b"new" * 10
    assert not cleaner.needs_cleaning(log, now_ms=due + 60 * MINUTE), "nothing is dirty any more"


async def test_min_compaction_lag_still_bounds_a_log_due_by_max_lag(open_log):
    """Due by max lag, the log is cleaned only up to the first segment younger than min.compaction.lag.ms."""
    log, cleaner = await mostly_clean_log(open_log, max_compaction_lag_ms=10 * MINUTE, min_compaction_lag_ms=5 * MINUTE)
    await write_at(log, T0 + 20 * MINUTE, [(b"key-02", b"newest")])
    await log.roll()
    young = log.segments[-2]
    target = cleaner.to_clean(log, now_ms=T0 + 22 * MINUTE)
    assert target.need_compaction_now and target.first_uncleanable_offset == young.base_offset
    await cleaner.clean(log, now_ms=T0 + 22 * MINUTE)
    assert [r.value for r in await all_records(log) if r.key == b"key-02"] == [b"new" * 10, b"newest"]


async def test_old_records_in_the_active_segment_never_make_a_log_due(open_log):
    config = small_config(cleanup_policy="compact", segment_bytes=1024, max_compaction_lag_ms=MINUTE)
    log = await open_log(config)
    cleaner = LogCleaner()
    await write_at(log, T0, [(b"k", b"v" * 40)] * 5)
    await log.roll()
    await cleaner.clean(log, now_ms=T0)
    await write_at(log, T0, [(b"k", b"old" * 10)] * 4)
    active_before = (log.active_segment.base_offset, log.active_segment.size)
    now = T0 + 60 * MINUTE
    assert cleaner.to_clean(log, now_ms=now).compaction_delay_ms == 0
    assert cleaner.grab_filthiest([log], now_ms=now) is None
    await cleaner.clean(log, now_ms=now)
    assert (log.active_segment.base_offset, log.active_segment.size) == active_before
    assert [r.value for r in await all_records(log)][-4:] == [b"old" * 10] * 4


async def test_the_dirtiest_log_goes_first_even_when_another_is_due_by_max_lag(open_log, tmp_path):
    """Kafka's grabFilthiestCompactedLog ranks every eligible log by dirty ratio alone."""
    due, cleaner = await mostly_clean_log(open_log, tmp_path / "due-0", max_compaction_lag_ms=MINUTE)
    dirty = await open_log(small_config(cleanup_policy="compact", segment_bytes=1024), directory=tmp_path / "dirty-0")
    await write_at(dirty, T0 + 50 * MINUTE, [(b"k", b"v" * 40)] * 30)
    await dirty.roll()
    now = T0 + 60 * MINUTE
    ranked = {t.log.topic: t for t in (cleaner.to_clean(log, now_ms=now) for log in (due, dirty))}
    assert ranked["due"].need_compaction_now and ranked["due"].cleanable_ratio < 0.5
    assert not ranked["dirty"].need_compaction_now and ranked["dirty"].cleanable_ratio == 1.0
    assert cleaner.grab_filthiest([due, dirty], now_ms=now).log is dirty
    await cleaner.clean(dirty, now_ms=now)
    assert cleaner.grab_filthiest([due, dirty], now_ms=now).log is due
