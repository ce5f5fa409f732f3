"""Deadlines keyed by what they are for, each carrying the operation to run when it falls due.

``CoordinatorTimer`` is Kafka's: ``schedule(key, deadline, operation)``, where the
operation takes the shard's state and ``now`` and returns the Effects it caused;
the shard's tick only runs the operations that are due, so a timer kind is
defined once, next to the code it belongs to, and nothing switches on keys.

``TimerHeap`` keeps the deadlines: a group of thousands of members has thousands
of heartbeat deadlines that move on every heartbeat; re-scheduling marks the old
heap entry stale (lazy deletion) instead of searching for it, so a heartbeat
costs one push.
"""

from __future__ import annotations

import heapq
import itertools
from functools import partial
from typing import Callable, Generic, Hashable, TypeVar

from groupcoord.coordinator.groups.runtime.effects import Effects

State = TypeVar("State")
Operation = Callable[[State, int], Effects]


class TimerHeap:
    """Deadlines by key. A deadline that only moves later (a heartbeat) is not pushed again: the key's
    live entry records the new deadline and the heap entry it already has is re-pushed only when it
    reaches the top (lazy extension), so a heartbeat costs a store into that entry, not a push. (A live
    entry is a list, changed in place by an extension: no tuple made and no dict insert per heartbeat.)"""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Hashable]] = []
        self._live: dict[Hashable, list[int]] = {}  # key -> [heap entry's deadline, its seq, deadline]
        self._seq = itertools.count()

    def schedule(self, key: Hashable, deadline_ms: int) -> None:
        """Set (or move) the deadline of ``key``."""
        live = self._live.get(key)
        if live is not None and live[0] <= deadline_ms:
            live[2] = deadline_ms  # later: its heap entry still comes first
            return
        seq = next(self._seq)
        self._live[key] = [deadline_ms, seq, deadline_ms]
        heapq.heappush(self._heap, (deadline_ms, seq, key))
        if len(self._heap) > 64 and len(self._heap) > 4 * len(self._live):
            self._compact()

    def extend(self, key: Hashable, deadline_ms: int) -> bool:
        """Move a live key's deadline to ``deadline_ms`` if that is no earlier than its heap entry (a
        heartbeat): a dict update, nothing pushed, and the earliest deadline unchanged, so nobody's timer
        needs re-arming. False (nothing changed) when the key is not live or the move would need a push."""
        live = self._live.get(key)
        if live is None or live[0] > deadline_ms:
            return False
        live[2] = deadline_ms
        return True

    def cancel(self, key: Hashable) -> None:
        self._live.pop(key, None)

    def deadline(self, key: Hashable) -> int | None:
        entry = self._live.get(key)
        return None if entry is None else entry[2]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._live

    def __len__(self) -> int:
        return len(self._live)

    def next_deadline(self) -> int | None:
        heap = self._heap
        if heap:
            deadline, seq, key = heap[0]
            entry = self._live.get(key)
            if entry is not None and entry[1] == seq and entry[2] == deadline:
                return deadline  # the top entry is a live key's own deadline: nothing to settle (the runtime
                # asks after every operation, so this is the common case)
        self._settle()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now_ms: int) -> list[Hashable]:
        """Remove and return the keys whose deadline is at or before ``now_ms``, earliest first."""
        due = []
        while True:
            self._settle()
            if not self._heap or self._heap[0][0] > now_ms:
                return due
            _, _, key = heapq.heappop(self._heap)
            del self._live[key]
            due.append(key)

    def _settle(self) -> None:
        """Drop stale entries off the top, and move extended ones to their real deadline, until the top
        entry is a live key's own deadline."""
        heap, live = self._heap, self._live
        while heap:
            deadline, seq, key = heap[0]
            entry = live.get(key)
            if entry is None or entry[1] != seq:
                heapq.heappop(heap)
            elif entry[2] != deadline:
                seq = next(self._seq)
                live[key] = [entry[2], seq, entry[2]]
                heapq.heapreplace(heap, (entry[2], seq, key))
            else:
                return

    def _compact(self) -> None:
        self._heap = [(d, s, k) for k, (_, s, d) in self._live.items()]
        self._live = {k: [d, s, d] for d, s, k in self._heap}
        heapq.heapify(self._heap)


class KeyedOperation:
    """One timer kind's operation, shared by every key of that kind: ``handler(key, state, now)`` reads the
    group and member ids from the key itself. Scheduling with it stores this one object, not a ``partial``
    and its argument tuple per key: those lived as long as the member (a session timer is re-armed, never
    dropped), two of the few objects per group the cyclic collector walked again at every older-generation
    pass. The operation for a key is bound only when it falls due."""

    __slots__ = ("handler",)

    def __init__(self, handler: Callable[[Hashable, State, int], Effects]) -> None:
        self.handler = handler

    def bind(self, key: Hashable) -> Operation:
        return partial(self.handler, key)


class CoordinatorTimer(Generic[State]):
    """A deadline per key and the operation it runs (an ``Operation``, or a ``KeyedOperation`` bound to the
    key when due); re-scheduling a key replaces both."""

    def __init__(self) -> None:
        self._deadlines = TimerHeap()
        self._operations: dict[Hashable, Operation | KeyedOperation] = {}
        self.next_deadline: Callable[[], int | None] = self._deadlines.next_deadline
        """The earliest live deadline, None when nothing is scheduled: the heap's own method, bound here because the
        runtime asks after every operation and a method of ours would only add a frame."""
        self.extend: Callable[[Hashable, int], bool] = self._deadlines.extend
        """Move the deadline of a scheduled key later, keeping its operation (see ``TimerHeap.extend``): the
        earliest deadline does not change. False when the key is not scheduled or would move earlier. The
        heap's own method, bound here for the same reason: every heartbeat calls it."""

    def schedule(self, key: Hashable, deadline_ms: int, operation: Operation | KeyedOperation) -> None:
        self._operations[key] = operation
        self._deadlines.schedule(key, deadline_ms)

    def cancel(self, key: Hashable) -> None:
        self._deadlines.cancel(key)
        self._operations.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._deadlines

    def __len__(self) -> int:
        return len(self._deadlines)

    def pop_due(self, now_ms: int) -> list[Operation]:
        """Remove and return the operations due at or before ``now_ms``, earliest first.

        All are taken before any runs, so an operation that cancels another due at the
        same time does not stop it: each operation checks the state it acts on.
        """
        due = []
        for key in self._deadlines.pop_due(now_ms):
            operation = self._operations.pop(key)
            due.append(operation.bind(key) if type(operation) is KeyedOperation else operation)
        return due
