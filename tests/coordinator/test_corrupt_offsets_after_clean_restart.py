"""A committed offset corrupted on disk after a clean shutdown is refused, never served (issue 17).

A clean shutdown lets recovery trust the segments without reading them; the CRC-32C of every batch is then
checked when the group coordinator replays it, or — when the shard starts from its snapshot, which has its
own CRC — by the background read of the log below the snapshot, which takes the partition offline just the
same. The flipped byte here turns 29060 into 29061 inside the offset commit's value, exactly the failure
reported.
"""

import asyncio

import subprocess
import sys
from pathlib import Path

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
from groupcoord.protocol.errors import ErrorCode
from groupcoord.storage.recovery import CLEAN_SHUTDOWN_MARKER

ROOT = Path(__file__).resolve().parents[2]
ACKNOWLEDGED = 29060
GROUP = "billing"


def commit(group: str, offset: int) -> OffsetCommit:
    return OffsetCommit(group, (("orders", (CommitPartition(0, offset, -1, ""),)),), -1, "")


def flip_the_committed_offset(partition_dir: Path) -> Path:
    """Turn the committed offset's low byte 0x84 into 0x85 (29060 -> 29061) in the segment on disk."""
    segment = next(partition_dir.glob("*.log"))
    data = bytearray(segment.read_bytes())
    needle = ACKNOWLEDGED.to_bytes(8, "big")
    at = data.find(needle)
    assert at >= 0, "the committed offset is in the segment"
    data[at + 7] ^= 0x01
    segment.write_bytes(bytes(data))
    return segment


def log_verify(data_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groupcoord", "log", "verify", "--data-dir", str(data_dir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


async def test_a_flipped_byte_in_a_committed_offset_is_refused_after_a_clean_restart(tmp_path):
    settings = dict(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1)
    async with Broker(**settings) as broker:
        await broker.dataplane.topics.create("orders", 1)
        for offset in (100, 200, ACKNOWLEDGED):
            answered = await broker.groups.commit_offsets(commit(GROUP, offset))
            assert answered["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none
        await broker.groups.commit_offsets(commit("other-" + GROUP, 5))  # valid batches follow on some shard
    partition_dir = tmp_path / f"__consumer_offsets-{partition_for(GROUP, 50)}"
    assert (partition_dir / CLEAN_SHUTDOWN_MARKER).exists(), "the stop was clean"
    assert log_verify(tmp_path).returncode == 0
    segment = flip_the_committed_offset(partition_dir)

    verified = log_verify(tmp_path)
    assert verified.returncode == 1
    assert segment.name in verified.stderr and "CRC mismatch in batch with base offset" in verified.stderr

    async with Broker(**settings) as broker:
        for _ in range(500):  # the snapshot may serve the intact value until the background check finds the flip
            fetched = await broker.groups.fetch_offsets(OffsetFetch(GROUP, None))
            assert str(ACKNOWLEDGED + 1) not in str(fetched)
            if fetched["error_code"] == ErrorCode.coordinator_not_available:
                break
            await asyncio.sleep(0.01)
        assert fetched["error_code"] == ErrorCode.coordinator_not_available, fetched
        log = broker.log_manager
        assert ("__consumer_offsets", partition_for(GROUP, 50)) in log.refused
        assert broker.dataplane.topics.missing_partition_error("__consumer_offsets", partition_for(GROUP, 50)) \
            == ErrorCode.kafka_storage_error
        healthy = next(g for g in (f"g{i}" for i in range(200)) if partition_for(g, 50) != partition_for(GROUP, 50))
        accepted = await broker.groups.commit_offsets(commit(healthy, 7))
        assert accepted["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none


async def test_without_a_snapshot_the_replay_itself_refuses_the_flipped_byte(tmp_path):
    settings = dict(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1)
    async with Broker(**settings) as broker:
        await broker.dataplane.topics.create("orders", 1)
        await broker.groups.commit_offsets(commit(GROUP, ACKNOWLEDGED))
    partition_dir = tmp_path / f"__consumer_offsets-{partition_for(GROUP, 50)}"
    (partition_dir / "group-coordinator.snapshot").unlink()
    flip_the_committed_offset(partition_dir)
    async with Broker(**settings) as broker:
        fetched = await broker.groups.fetch_offsets(OffsetFetch(GROUP, None))
        assert fetched["error_code"] == ErrorCode.coordinator_not_available, fetched
