"""Deadlines keyed by what they are for, in one heap, cancellable and re-schedulable in O(log n).

A group of thousands of members has thousands of heartbeat deadlines that move on
every heartbeat; re-scheduling marks the old heap entry stale (lazy deletion)
instead of searching for it, so a heartbeat costs one push.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Hashable


class TimerHeap:
    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Hashable]] = []
        self._live: dict[Hashable, tuple[int, int]] = {}
        self._seq = itertools.count()

    def schedule(self, key: Hashable, deadline_ms: int) -> None:
        """Set (or move) the deadline of ``key``."""
        entry = (deadline_ms, next(self._seq))
        self._live[key] = entry
        heapq.heappush(self._heap, (entry[0], entry[1], key))
        if len(self._heap) > 64 and len(self._heap) > 4 * len(self._live):
            self._compact()

    def cancel(self, key: Hashable) -> None:
        self._live.pop(key, None)

    def deadline(self, key: Hashable) -> int | None:
        entry = self._live.get(key)
        return None if entry is None else entry[0]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._live

    def __len__(self) -> int:
        return len(self._live)

    def next_deadline(self) -> int | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now_ms: int) -> list[Hashable]:
        """Remove and return the keys whose deadline is at or before ``now_ms``, earliest first."""
        due = []
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > now_ms:
                return due
            _, _, key = heapq.heappop(self._heap)
            del self._live[key]
            due.append(key)

    def _drop_stale(self) -> None:
        heap, live = self._heap, self._live
        while heap and live.get(heap[0][2]) != (heap[0][0], heap[0][1]):
            heapq.heappop(heap)

    def _compact(self) -> None:
        self._heap = [(d, s, k) for k, (d, s) in self._live.items()]
        heapq.heapify(self._heap)
