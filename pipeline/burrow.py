"""Burrow's consumer-status rules, over a sliding window of commits with the lag seen at each.

Burrow (LinkedIn's lag monitor) judges a group partition by its last N commits, not by one lag number,
because lag alone cannot tell a slow consumer from a dead one. For each commit it keeps the committed
offset, the commit's timestamp and the lag at that moment (log end offset minus the committed offset).
Its rules, in its order, apply only when no commit in the window saw zero lag (a consumer that caught up
at any point is OK):

* REWIND — an offset in the window is lower than the one before it;
* STOP   — the newest commit is older than the window's own span (now - last > last - first): the
           consumer stopped committing while lag remains;
* STALL  — every offset in the window is the same (commits keep coming, nothing is consumed);
* WARN   — lag never went down from one commit to the next (the consumer falls behind);
* OK     — otherwise.

A group is ERR when any partition is STOP, STALL or REWIND, WARN when any is WARN, else OK (Burrow's
group status). A window needs two commits before STOP/STALL/WARN can be told apart from a fresh start.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable

from groupcoord.protocol.frozen import frozen_dataclass

DEFAULT_WINDOW = 10


class PartitionStatus(str, Enum):
    OK = "OK"
    WARN = "WARN"
    STOP = "STOP"
    STALL = "STALL"
    REWIND = "REWIND"


class GroupStatus(str, Enum):
    OK = "OK"
    WARN = "WARN"
    ERR = "ERR"


@frozen_dataclass(slots=False)
class Commit:
    timestamp: int  # ms
    offset: int
    lag: int | None  # None while the log end offset is not known


def partition_status(window: Iterable[Commit], now_ms: int) -> PartitionStatus:
    commits = list(window)
    if not commits:
        return PartitionStatus.OK
    lags = [c.lag for c in commits]
    if any(lag is None or lag <= 0 for lag in lags):
        return PartitionStatus.OK
    offsets = [c.offset for c in commits]
    if any(later < earlier for earlier, later in zip(offsets, offsets[1:])):
        return PartitionStatus.REWIND
    if len(commits) < 2:
        return PartitionStatus.OK
    first, last = commits[0].timestamp, commits[-1].timestamp
    if now_ms - last > last - first:
        return PartitionStatus.STOP
    if offsets[0] == offsets[-1]:
        return PartitionStatus.STALL
    if all(later >= earlier for earlier, later in zip(lags, lags[1:])):
        return PartitionStatus.WARN
    return PartitionStatus.OK


def group_status(statuses: Iterable[PartitionStatus]) -> GroupStatus:
    seen = set(statuses)
    if seen & {PartitionStatus.STOP, PartitionStatus.STALL, PartitionStatus.REWIND}:
        return GroupStatus.ERR
    return GroupStatus.WARN if PartitionStatus.WARN in seen else GroupStatus.OK


@dataclass
class PartitionTrack:
    """What the watcher remembers about one (group, topic, partition) between micro-batches."""

    window_size: int = DEFAULT_WINDOW
    window: deque = field(default_factory=deque)
    commits: int = 0
    first_commit_ms: int | None = None
    last_commit_ms: int | None = None
    offset: int | None = None
    leader_epoch: int | None = None
    metadata: str | None = None

    def commit(self, timestamp: int, offset: int, leader_epoch: int | None, metadata: str | None) -> None:
        self.commits += 1
        self.first_commit_ms = timestamp if self.first_commit_ms is None else min(self.first_commit_ms, timestamp)
        self.last_commit_ms = timestamp if self.last_commit_ms is None else max(self.last_commit_ms, timestamp)
        self.offset, self.leader_epoch, self.metadata = offset, leader_epoch, metadata
        self.window.append(Commit(timestamp, offset, None))
        while len(self.window) > self.window_size:
            self.window.popleft()

    def observe_log_end(self, log_end: int | None) -> None:
        """Give the commits seen since the last look their lag, against the log end offset read now."""
        if log_end is None:
            return
        for index, commit in enumerate(self.window):
            if commit.lag is None:
                self.window[index] = Commit(commit.timestamp, commit.offset, max(0, log_end - commit.offset))

    def status(self, now_ms: int) -> PartitionStatus:
        return partition_status(self.window, now_ms)
