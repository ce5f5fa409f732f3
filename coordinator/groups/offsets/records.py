"""Builds the ``__consumer_offsets`` record of one committed offset (or its tombstone)."""

from __future__ import annotations

from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue


def offset_record(group_id: str, topic: str, partition: int, value: OffsetCommitValue | None) -> tuple[OffsetCommitKey, OffsetCommitValue | None]:
    return OffsetCommitKey(group_id, topic, partition), value
