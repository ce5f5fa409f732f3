"""Kafka's ``recovery-point-offset-checkpoint``: per data directory, how far each log is known durable.

Same format and atomic replacement as the cleaner's checkpoint (version line, count line, ``topic partition
offset`` lines; temp file, fsync, rename, fsync the directory). The LogManager writes it at a clean shutdown
and periodically after flushing the logs (``log.flush.offset.checkpoint.interval.ms``); on start each log
recovers only the segments past its entry (Kafka's LogLoader). A missing or unreadable file only means a
longer recovery: every log is then checked from its start.
"""

from __future__ import annotations

from typing import Final

from groupcoord.storage.cleaner_checkpoint import CleanerCheckpoint

RECOVERY_POINT_CHECKPOINT_FILE: Final = "recovery-point-offset-checkpoint"


class RecoveryPointCheckpoint(CleanerCheckpoint):
    FILE_NAME = RECOVERY_POINT_CHECKPOINT_FILE
    DESCRIPTION = "recovery point checkpoint"
    IF_UNREADABLE = "every log is recovered from its start"
