"""The runtime's snapshots: a restart replays the snapshot and only the log past it; a snapshot that is
corrupt, torn or ahead of the log is ignored (and removed) and the whole log is replayed (issue 17)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given, strategies as st

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
from groupcoord.coordinator.groups.runtime.snapshot import (
    SNAPSHOT_FILE, LatestRecords, decode_snapshot, pack_latest, pack_latest_24, unpack_latest)
from groupcoord.protocol.errors import ErrorCode
from tests.support.daemon import Daemon
from tests.support.wire import WireClient

GROUP = "snapshotted"
SHARD = partition_for(GROUP, 50)


def commit(offset: int, partitions: int = 3) -> OffsetCommit:
    return OffsetCommit(GROUP, (("orders", tuple(CommitPartition(p, offset + p, -1, "") for p in range(partitions))),),
                        -1, "")


def settings(tmp_path: Path, **extra) -> dict:
    return dict(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1, **extra)


async def committed(broker: Broker) -> dict[int, int]:
    fetched = await broker.groups.fetch_offsets(OffsetFetch(GROUP, None))
    assert fetched["error_code"] == ErrorCode.none, fetched
    return {p["partition_index"]: p["committed_offset"] for t in fetched["topics"] for p in t["partitions"]}


def snapshot_file(tmp_path: Path) -> Path:
    return tmp_path / f"__consumer_offsets-{SHARD}" / SNAPSHOT_FILE


async def commit_history(tmp_path: Path, commits: int = 200, **extra) -> dict[int, int]:
    async with Broker(**settings(tmp_path, **extra)) as broker:
        await broker.dataplane.topics.create("orders", 3)
        for n in range(commits):
            await broker.groups.commit_offsets(commit(n))
        return await committed(broker)


async def test_a_clean_stop_leaves_a_snapshot_and_the_next_start_replays_no_log(tmp_path):
    before = await commit_history(tmp_path)
    assert snapshot_file(tmp_path).exists()
    async with Broker(**settings(tmp_path)) as broker:
        assert await committed(broker) == before == {0: 199, 1: 200, 2: 201}
        assert broker.groups.last_load(SHARD) == (3, 0), "three keys from the snapshot, nothing from the log"


async def test_snapshots_are_taken_while_running_and_the_tail_is_replayed(tmp_path):
    async with Broker(**settings(tmp_path, group_coordinator_snapshot_interval_records=30)) as broker:
        await broker.dataplane.topics.create("orders", 3)
        for n in range(50):
            await broker.groups.commit_offsets(commit(n))
        for _ in range(100):
            if snapshot_file(tmp_path).exists():
                break
            await asyncio.sleep(0.01)
        end, records = decode_snapshot(snapshot_file(tmp_path).read_bytes(), SHARD)
        assert end >= 30 and len(records) == 3


def test_after_sigkill_the_snapshot_plus_the_tail_give_every_acknowledged_commit(tmp_path):
    daemon = Daemon(tmp_path, **{"group-coordinator-snapshot-interval-records": "40"}).start()
    try:
        with WireClient(daemon.bootstrap_servers) as client:
            created = client.request(19, 7, {"topics": [{"name": "orders", "num_partitions": 3, "replication_factor": 1,
                                                         "assignments": [], "configs": []}],
                                             "timeout_ms": 10000, "validate_only": False})
            assert created.topics[0].error_code == 0, created
            for n in range(100):
                body = {"group_id": GROUP, "generation_id_or_member_epoch": -1, "member_id": "",
                        "group_instance_id": None,
                        "topics": [{"name": "orders", "partitions": [
                            {"partition_index": p, "committed_offset": n + p, "committed_leader_epoch": -1,
                             "committed_metadata": ""} for p in range(3)]}]}
                answer = client.request(8, 8, body)
                assert [p.error_code for t in answer.topics for p in t.partitions] == [0, 0, 0], answer
        assert snapshot_file(tmp_path).exists(), "snapshots are taken while running"
    finally:
        daemon.kill()
    end, _ = decode_snapshot(snapshot_file(tmp_path).read_bytes(), SHARD)
    assert 0 < end < 300, "the SIGKILL left a tail past the snapshot"

    async def restarted() -> tuple[dict[int, int], tuple[int, int]]:
        async with Broker(**settings(tmp_path)) as broker:
            return await committed(broker), broker.groups.last_load(SHARD)

    offsets, (from_snapshot, from_log) = asyncio.run(restarted())
    assert offsets == {0: 99, 1: 100, 2: 101}
    assert from_snapshot == 3 and 0 < from_log < 300


async def test_a_corrupt_snapshot_is_ignored_and_the_whole_log_replayed(tmp_path):
    before = await commit_history(tmp_path)
    data = bytearray(snapshot_file(tmp_path).read_bytes())
    data[len(data) // 2] ^= 0x40
    snapshot_file(tmp_path).write_bytes(bytes(data))
    async with Broker(**settings(tmp_path)) as broker:
        assert await committed(broker) == before
        assert broker.groups.last_load(SHARD) == (0, 600)
    assert snapshot_file(tmp_path).exists(), "the clean stop wrote a sound one again"


async def test_a_torn_snapshot_is_ignored(tmp_path):
    before = await commit_history(tmp_path)
    data = snapshot_file(tmp_path).read_bytes()
    snapshot_file(tmp_path).write_bytes(data[: len(data) - 7])
    async with Broker(**settings(tmp_path)) as broker:
        assert await committed(broker) == before
        assert broker.groups.last_load(SHARD)[0] == 0


async def test_a_snapshot_ahead_of_the_log_is_ignored(tmp_path):
    """The log lost a tail the snapshot had seen (fsync=never and a power cut), or the partition was
    recreated: the snapshot would claim records the log no longer has."""
    before = await commit_history(tmp_path, commits=50)
    stale = snapshot_file(tmp_path).read_bytes()
    await commit_history(tmp_path, commits=0)  # nothing new: same log end
    partition_dir = snapshot_file(tmp_path).parent
    for path in partition_dir.iterdir():  # the partition recreated empty, the old snapshot left behind
        path.unlink()
    async with Broker(**settings(tmp_path)) as broker:
        pass
    snapshot_file(tmp_path).write_bytes(stale)
    async with Broker(**settings(tmp_path)) as broker:
        fetched = await broker.groups.fetch_offsets(OffsetFetch(GROUP, None))
        assert fetched["error_code"] == ErrorCode.none and not fetched["topics"], "nothing the log does not hold"
        assert broker.groups.last_load(SHARD) == (0, 0)
    assert before


@given(offset=st.integers(min_value=-(2**63), max_value=2**63 - 1), value=st.binary(min_size=24, max_size=24))
def test_a_24_byte_value_packs_as_pack_latest_packs_it(offset: int, value: bytes) -> None:
    """The replay's one-allocation packing of an offset commit v3 value is ``pack_latest``'s, byte for byte, and
    ``unpack_latest`` reads it back."""
    packed = pack_latest_24(offset, 1, value)
    assert packed == pack_latest(offset, value)
    assert unpack_latest(packed) == (offset, value)


_keys = st.sampled_from([b"k%d" % i for i in range(6)])
_runs = st.lists(st.tuples(st.integers(0, 40), st.lists(st.tuples(_keys, st.one_of(st.none(), st.binary(max_size=30))),
                                                        max_size=8)), max_size=6)


@given(start=st.integers(0, 50), runs=_runs)
def test_a_run_added_at_once_keeps_each_record_at_its_offset_in_log_order(start, runs):
    """``LatestRecords.add_run`` (one call per batch made durable) and ``add`` keep what the compacted log keeps,
    written out here record by record: each key's latest packed record, re-inserted at the end (log order), the
    end offset past the highest offset added, the count since the snapshot; for runs at offsets ahead of, at or
    behind what is held."""
    latest, single = LatestRecords.empty(), LatestRecords.empty()
    latest.end_offset = single.end_offset = start
    expected: dict[bytes, bytes] = {}
    end, count = start, 0
    for gap, records in runs:
        base = max(end - 20, 0) + gap
        latest.add_run(base, [(key, value, ()) for key, value in records])
        for delta, (key, value) in enumerate(records):
            single.add(base + delta, key, value)
            expected.pop(key, None)
            expected[key] = pack_latest(base + delta, value)
            end = max(end, base + delta + 1)
            count += 1
        for held in (latest, single):
            assert list(held.records.items()) == list(expected.items())
            assert (held.end_offset, held.since_snapshot) == (end, count)
