"""A data plane on a real storage engine in a temporary directory, with a manual clock."""
from __future__ import annotations

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.clock import ManualClock
from groupcoord.coordinator.dataplane.service import DataPlane
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager


class Node:
    """Open, close and reopen a broker's data plane on one data directory (to test restarts)."""

    def __init__(self, data_dir, **settings):
        self.config = BrokerConfig().replace(data_dir=str(data_dir), **settings)
        self.clock = ManualClock()
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
