"""Delete-policy retention: drop whole non-active segments by age and by total size.

Follows Kafka: segments go oldest first and only while the rule keeps holding, so the
log start offset only moves forward and the active segment is never removed.
"""

from __future__ import annotations

import time

from groupcoord.storage.log import PartitionLog
from groupcoord.storage.segment import Segment


def expired_by_time(log: PartitionLog, now_ms: int) -> list[Segment]:
    """Leading non-active segments whose newest record is older than retention.ms."""
    if log.config.retention_ms < 0:
        return []
    limit = now_ms - log.config.retention_ms
    doomed = []
    for segment in log.segments[:-1]:
        newest = segment.max_timestamp if segment.max_timestamp >= 0 else segment.last_modified_ms()
        if newest >= limit:
            break
        doomed.append(segment)
    return doomed


def expired_by_size(log: PartitionLog, already: list[Segment]) -> list[Segment]:
    """Leading non-active segments to drop so the log fits retention.bytes."""
    if log.config.retention_bytes < 0:
        return []
    excess = log.size_bytes - sum(segment.size for segment in already) - log.config.retention_bytes
    doomed = []
    for segment in log.segments[len(already):-1]:
        if excess - segment.size < 0:
            break
        excess -= segment.size
        doomed.append(segment)
    return doomed


async def apply_retention(log: PartitionLog, *, now_ms: int | None = None) -> int:
    """Apply cleanup.policy=delete to one log; returns how many segments were removed."""
    if not log.config.delete:
        return 0
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    async with log.maintenance_lock:
        by_time = expired_by_time(log, now_ms)
        by_size = expired_by_size(log, by_time)
        doomed = by_time + by_size
        if doomed:
            reason = "retention.ms" if not by_size else ("retention.bytes" if not by_time else "retention.ms+bytes")
            await log.delete_segments(doomed, reason)
        return len(doomed)
