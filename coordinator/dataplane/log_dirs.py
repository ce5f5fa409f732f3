"""DescribeLogDirs (``kafka-log-dirs``): the one log directory this broker has, every partition in it with its
size, and the directory's total and usable bytes, as Kafka's ReplicaManager.describeLogDirs reports them.

A single broker has no replica fetchers and no future (moving) logs, so every offset lag is 0 and no entry
is a future key. Partitions taken offline because their log is corrupt are not listed, as Kafka leaves an
offline directory's partitions out.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterable

from groupcoord.protocol.errors import ErrorCode

UNKNOWN_BYTES = -1


class LogDirsService:
    def __init__(self, data_dir: Path, log_manager: Any) -> None:
        self._data_dir = Path(data_dir).resolve()
        self._log_manager = log_manager

    def describe(self, wanted: Iterable[tuple[str, Iterable[int]]] | None) -> dict:
        """``wanted``: (topic, partitions) pairs, or None for every partition in the directory."""
        logs = self._log_manager.logs
        if wanted is None:
            keys = sorted(logs)
        else:
            keys = [(topic, int(p)) for topic, partitions in wanted for p in partitions if (topic, int(p)) in logs]
        topics: dict[str, list[dict]] = {}
        for key in keys:
            topics.setdefault(key[0], []).append({"partition_index": key[1],
                                                  "partition_size": logs[key].size_bytes,
                                                  "offset_lag": 0, "is_future_key": False})
        try:
            usage = shutil.disk_usage(self._data_dir)
            total, usable = usage.total, usage.free
        except OSError:
            total = usable = UNKNOWN_BYTES
        return {"throttle_time": 0, "error_code": ErrorCode.none, "results": [{
            "error_code": ErrorCode.none, "log_dir": str(self._data_dir),
            "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
            "total_bytes": total, "usable_bytes": usable}]}
