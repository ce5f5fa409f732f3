"""Shared helpers for storage scenarios: small batches and logs with tiny segments."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupcoord.protocol.record_batch import Record, decode_records
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import PartitionLog


def small_config(**overrides) -> LogConfig:
    settings = {"segment.bytes": "4096", "index.interval.bytes": "256"}
    settings.update({key.replace("_", "."): str(value) for key, value in overrides.items()})
    return LogConfig.from_topic_configs(settings)


async def all_records(log: PartitionLog, start: int = 0) -> list[Record]:
    records: list[Record] = []
    async for header, raw in log.batches(start):
        records.extend(decode_records(raw, 0, header))
    return records


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "orders-0"


@pytest.fixture
async def open_log(log_dir: Path):
    """Factory opening PartitionLogs in ``log_dir``; every log left open is closed afterwards."""
    opened: list[PartitionLog] = []

    async def factory(config: LogConfig | None = None, fsync: FsyncPolicy = FsyncPolicy.NEVER,
                      directory: Path | None = None) -> PartitionLog:
        log = await PartitionLog.open(directory or log_dir, config or small_config(), fsync)
        opened.append(log)
        return log

    yield factory
    for log in opened:
        if not log._closed:
            await log.close()
