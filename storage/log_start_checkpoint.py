"""Kafka's ``log-start-offset-checkpoint``: the log start offset of each partition whose start was moved
past its first segment's base offset (DeleteRecords), so that a restart does not bring deleted records back.

Same format and atomic replacement as the other checkpoints. Kafka writes it periodically; here it is
rewritten as soon as a DeleteRecords moves a start, before the request is answered, so an acknowledged
deletion survives a crash. A missing or unreadable file means each log starts at its first segment.
"""

from __future__ import annotations

from typing import Final

from groupcoord.storage.cleaner_checkpoint import CleanerCheckpoint

LOG_START_OFFSET_CHECKPOINT_FILE: Final = "log-start-offset-checkpoint"


class LogStartOffsetCheckpoint(CleanerCheckpoint):
    FILE_NAME = LOG_START_OFFSET_CHECKPOINT_FILE
    DESCRIPTION = "log start offset checkpoint"
    IF_UNREADABLE = "every log starts at its first segment"
