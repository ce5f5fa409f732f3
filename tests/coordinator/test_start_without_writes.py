"""Starting a broker writes nothing when nothing changed, so it starts on a full disk (issue 17)."""

import os
import subprocess
from pathlib import Path

import pytest

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.recovery import CLEAN_SHUTDOWN_MARKER


def files_of(data_dir: Path) -> dict[str, tuple[int, int, int]]:
    """Every file's (inode, size, mtime) except the clean-shutdown markers a start consumes."""
    found = {}
    for root, _dirs, names in os.walk(data_dir):
        for name in names:
            if name in (CLEAN_SHUTDOWN_MARKER, ".lock"):
                continue
            st = os.stat(Path(root) / name)
            found[str(Path(root, name).relative_to(data_dir))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


async def populate(data_dir: Path) -> None:
    async with Broker(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1) as broker:
        await broker.dataplane.topics.create("orders", 2)
        await broker.dataplane.topics.log("orders", 0).append(encode_batch([(b"k", b"v", ())]))
        await broker.groups.commit_offsets(OffsetCommit("g", (("orders", (CommitPartition(0, 42, -1, ""),)),), -1, ""))


async def committed(broker: Broker) -> int:
    fetched = await broker.groups.fetch_offsets(OffsetFetch("g", None))
    return fetched["topics"][0]["partitions"][0]["committed_offset"]


async def test_a_start_after_a_clean_stop_creates_and_rewrites_no_file(tmp_path):
    await populate(tmp_path)
    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1):
        pass  # records __consumer_offsets (created by the group coordinator) in the catalog, once
    before = files_of(tmp_path)
    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1) as broker:
        during = files_of(tmp_path)
        assert await committed(broker) == 42
    assert during == before


@pytest.fixture
def small_tmpfs(tmp_path):
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount_point)],
                             capture_output=True, timeout=30)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, timeout=30)


async def test_the_broker_starts_and_serves_committed_offsets_on_a_full_disk(small_tmpfs):
    data_dir = small_tmpfs / "data"
    await populate(data_dir)
    with open(small_tmpfs / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * (1 << 16))
                filler.flush()
        except OSError:
            pass
    with pytest.raises(OSError):
        (small_tmpfs / "probe").write_bytes(b"x" * 8192)
    async with Broker(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1) as broker:
        assert await committed(broker) == 42
        assert broker.dataplane.topics.get("orders").partitions == 2
