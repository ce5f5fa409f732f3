"""A data plane on a real storage engine in a temporary directory, with a manual clock."""
from __future__ import annotations

import time

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.clock import ManualClock
from groupcoord.coordinator.dataplane.service import DataPlane
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager


TEST_START_MS = int(time.time() * 1000)
"""The manual clock's start: the wall time the tests began, so that batches stamped with the real time (encode_batch's
default, as a client's) are "now" and not years ahead of the broker (Kafka 4 refuses records more than
message.timestamp.after.max.ms, an hour by default, ahead of its clock)."""


class Node:
    """Open, close and reopen a broker's data plane on one data directory (to test restarts)."""

    def __init__(self, data_dir, **settings):
        # No busy linger unless a test asks for it: the linger's hold is timed by the manual clock, which stands
        # still, and whether the loop counts as busy depends on how fast the machine runs the test.
        settings.setdefault("fetch_busy_linger_ms", 0)
        self.config = BrokerConfig().replace(data_dir=str(data_dir), **settings)
        self.clock = ManualClock(TEST_START_MS)
        self.log_manager = None
        self.dataplane = None

    async def start(self) -> DataPlane:
        self.log_manager = LogManager(self.config.data_path, FsyncPolicy.NEVER, LogConfig())
        self.dataplane = DataPlane(self.config, self.log_manager, clock=self.clock)
        await self.dataplane.start()
        return self.dataplane

    async def stop(self) -> None:
        await self.dataplane.stop()
        await self.log_manager.close()

    async def restart(self) -> DataPlane:
        await self.stop()
        return await self.start()

    async def crash_restart(self) -> DataPlane:
        """Restart without the data plane's clean stop (no producer snapshots written)."""
        await self.log_manager.close()
        return await self.start()


@pytest.fixture
async def node(tmp_path):
    n = Node(tmp_path / "data")
    await n.start()
    yield n
    await n.stop()


@pytest.fixture
def dataplane(node) -> DataPlane:
    return node.dataplane
