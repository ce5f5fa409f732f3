"""One share partition (Kafka's SharePartition), sans I/O: which records of one topic partition a share group
has delivered, to whom, how often, and what became of them.

Between the start offset and the end offset every record is *in flight*: ACQUIRED by one member under an
acquisition lock that expires at a deadline, AVAILABLE to be acquired (again), or finished — ACKNOWLEDGED or
ARCHIVED. Records below the start offset are finished; records past the end have never been delivered.

- A member acquires AVAILABLE records (the delivery count goes up by one); a record is never held by two
  members at once, and at most ``max_record_locks`` records past the start offset are in flight.
- ACCEPT makes a record ACKNOWLEDGED; REJECT (and GAP, an offset the log does not hold) ARCHIVED; RELEASE,
  a lock expiring or the member leaving make it AVAILABLE again — or ARCHIVED once its delivery count has
  reached ``delivery_limit``; RENEW (KIP-1222) extends the lock.
- Every change a restart must see is kept in ``changed`` until the manager hands it to the persister
  (``take_write``), as Kafka's SharePartition writes state batches after each acknowledgement.
- The start offset moves past every finished record at its front (those records are forgotten) once that
  write is made — as Kafka's does after the write succeeds — so a write carries the start offset from before
  its own acknowledgements and the count of finished records past it (what DescribeShareGroupOffsets shows).
"""

from __future__ import annotations

import enum
import heapq
import uuid
from dataclasses import dataclass
from typing import Iterable

from groupcoord.coordinator.share.records import StateBatch
from groupcoord.coordinator.share.shard import WriteData
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass


class RecordState(enum.IntEnum):
    """Kafka's RecordState ids (the persisted ones are 0, 2 and 4)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


FINISHED = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState
    delivery_count: int
    member_id: str | None = None
    deadline: int | None = None


@frozen_dataclass
class AcquiredRecords:
    first_offset: int
    last_offset: int
    delivery_count: int


@frozen_dataclass
class LogBatch:
    """What a fetch read: a batch's offsets, and whether it is to be delivered (a control batch, or a batch of
    an aborted transaction at read_committed, is not: its offsets are archived unseen)."""

    first_offset: int
    last_offset: int
    deliverable: bool = True


@frozen_dataclass
class AckBatch:
    first_offset: int
    last_offset: int
    types: tuple[int, ...]

    def type_of(self, offset: int) -> int:
        return self.types[0] if len(self.types) == 1 else self.types[offset - self.first_offset]


class SharePartition:
    def __init__(self, group_id: str, topic_id: uuid.UUID, partition: int, *, start_offset: int,
                 batches: Iterable[StateBatch] = (), state_epoch: int = 0, lock_duration_ms: int = 30000,
                 delivery_limit: int = 5, max_record_locks: int = 2000) -> None:
        self.group_id = group_id
        self.topic_id = topic_id
        self.partition = partition
        self.state_epoch = state_epoch
        self.lock_duration_ms = lock_duration_ms
        self.delivery_limit = delivery_limit
        self.max_record_locks = max_record_locks
        self.start_offset = start_offset
        self.records: dict[int, InFlightRecord] = {}
        self.end_offset = start_offset
        """One past the last offset in flight or persisted: offsets from here have never been delivered."""
        for b in batches:
            for offset in range(max(b.first_offset, start_offset), b.last_offset + 1):
                self.records[offset] = InFlightRecord(RecordState(b.delivery_state), b.delivery_count)
            self.end_offset = max(self.end_offset, b.last_offset + 1)
        self.changed: set[int] = set()
        self.start_changed = False
        # Kept as they change, so that a fetch or a timer costs nothing per record in flight:
        self._available = sum(1 for r in self.records.values() if r.state is RecordState.AVAILABLE)
        self._unknown = (self.end_offset - self.start_offset) - len(self.records)  # never delivered, below the end
        self._finished = sum(1 for r in self.records.values() if r.state in FINISHED)
        self._deadlines: list[tuple[int, int]] = []  # (deadline, offset), stale entries skipped when met
        # counters for metrics and tests
        self.lock_expiries = 0
        self.redeliveries = 0
        self.archived_by_limit = 0
        self._advance_start()

    # ------------------------------------------------------------------ reading the state

    def in_flight(self) -> int:
        return self.end_offset - self.start_offset

    def acquired_count(self, member_id: str | None = None) -> int:
        return sum(1 for r in self.records.values()
                   if r.state is RecordState.ACQUIRED and (member_id is None or r.member_id == member_id))

    def available_count(self) -> int:
        return self._available

    def state_of(self, offset: int) -> RecordState | None:
        if offset < self.start_offset:
            return RecordState.ACKNOWLEDGED
        record = self.records.get(offset)
        return None if record is None else record.state

    def next_fetch_offset(self) -> int:
        """Where a fetch for this share partition reads from: the first AVAILABLE (or never delivered) offset."""
        if not self._available and not self._unknown:
            return self.end_offset
        for offset in range(self.start_offset, self.end_offset):
            record = self.records.get(offset)
            if record is None or record.state is RecordState.AVAILABLE:
                return offset
        return self.end_offset

    def can_acquire(self) -> bool:
        if self.in_flight() < self.max_record_locks:
            return True
        return bool(self._available or self._unknown)

    def next_deadline(self) -> int | None:
        heap = self._deadlines
        while heap:
            deadline, offset = heap[0]
            record = self.records.get(offset)
            if record is not None and record.state is RecordState.ACQUIRED and record.deadline == deadline:
                return deadline
            heapq.heappop(heap)
        return None

    # ------------------------------------------------------------------ acquiring

    def acquire(self, member_id: str, batches: Iterable[LogBatch], max_records: int, now: int, *,
                record_limit: bool = False) -> list[AcquiredRecords]:
        """Acquire for ``member_id`` what the fetched batches hold that is AVAILABLE or new; returned as
        contiguous ranges of one delivery count. ``max_records`` is checked at batch boundaries (Kafka's
        batch-optimized acquire mode: a batch begun is acquired whole), or at every record with
        ``record_limit`` (ShareAcquireMode 1, KIP-1206)."""
        out: list[AcquiredRecords] = []
        taken = 0
        deadline = now + self.lock_duration_ms
        for batch in batches:
            if taken >= max_records:
                return out
            for offset in range(max(batch.first_offset, self.start_offset), batch.last_offset + 1):
                if record_limit and taken >= max_records:
                    return out
                record = self.records.get(offset)
                unknown = record is None and offset < self.end_offset
                if offset >= self.end_offset:
                    if offset - self.start_offset >= self.max_record_locks:
                        return out
                    for missing in range(self.end_offset, offset):  # not in the log (compacted away)
                        self._finish(missing, RecordState.ARCHIVED)
                    self.end_offset = offset + 1
                    record = None
                elif record is not None and record.state is not RecordState.AVAILABLE:
                    continue
                if unknown:
                    self._unknown -= 1
                if not batch.deliverable:
                    self._finish(offset, RecordState.ARCHIVED)
                    continue
                if record is None:
                    record = self.records[offset] = InFlightRecord(RecordState.AVAILABLE, 0)
                else:
                    self._available -= 1
                    if record.delivery_count > 0:
                        self.redeliveries += 1
                record.state = RecordState.ACQUIRED
                record.delivery_count += 1
                record.member_id = member_id
                record.deadline = deadline
                heapq.heappush(self._deadlines, (deadline, offset))
                taken += 1
                last = out[-1] if out else None
                if last is not None and last.last_offset + 1 == offset and last.delivery_count == record.delivery_count:
                    out[-1] = AcquiredRecords(last.first_offset, offset, last.delivery_count)
                else:
                    out.append(AcquiredRecords(offset, offset, record.delivery_count))
        return out

    # ------------------------------------------------------------------ acknowledging

    def acknowledge(self, member_id: str, batches: Iterable[AckBatch], now: int) -> ErrorCode:
        """Apply a member's acknowledgements, all or none: every offset must be ACQUIRED by that member
        (else INVALID_RECORD_STATE), the types one per batch or one per offset (else INVALID_REQUEST)."""
        batches = list(batches)
        for b in batches:
            if b.last_offset < b.first_offset or not b.types:
                return ErrorCode.invalid_request
            if len(b.types) != 1 and len(b.types) != b.last_offset - b.first_offset + 1:
                return ErrorCode.invalid_request
            if any(t not in AcknowledgeType._value2member_map_ for t in b.types):
                return ErrorCode.invalid_request
            # Kafka's batch lookup: nothing in flight at or below the first offset is INVALID_RECORD_STATE,
            # offsets past the last one in flight an INVALID_REQUEST.
            if not self.records or b.last_offset < self.start_offset:
                return ErrorCode.invalid_record_state
            if b.last_offset >= self.end_offset:
                return ErrorCode.invalid_request
            for offset in range(b.first_offset, b.last_offset + 1):
                record = self.records.get(offset)
                if record is None or record.state is not RecordState.ACQUIRED or record.member_id != member_id:
                    return ErrorCode.invalid_record_state
        for b in batches:
            for offset in range(b.first_offset, b.last_offset + 1):
                kind = b.type_of(offset)
                if kind == AcknowledgeType.ACCEPT:
                    self._finish(offset, RecordState.ACKNOWLEDGED)
                elif kind in (AcknowledgeType.REJECT, AcknowledgeType.GAP):
                    self._finish(offset, RecordState.ARCHIVED)
                elif kind == AcknowledgeType.RELEASE:
                    self._release(offset)
                else:  # RENEW
                    self.records[offset].deadline = now + self.lock_duration_ms
                    heapq.heappush(self._deadlines, (now + self.lock_duration_ms, offset))
        return ErrorCode.none

    def release_member(self, member_id: str) -> int:
        """A member left (or closed its share session): what it holds becomes available again."""
        offsets = [o for o, r in self.records.items() if r.state is RecordState.ACQUIRED and r.member_id == member_id]
        for offset in offsets:
            self._release(offset)
        return len(offsets)

    def expire_locks(self, now: int) -> int:
        """Locks whose deadline has passed: those records become available again (or archived)."""
        expired = 0
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            deadline, offset = heapq.heappop(heap)
            record = self.records.get(offset)
            if record is not None and record.state is RecordState.ACQUIRED and record.deadline == deadline:
                self._release(offset)
                expired += 1
        self.lock_expiries += expired
        return expired

    def _release(self, offset: int) -> None:
        record = self.records[offset]
        if record.delivery_count >= self.delivery_limit:
            self.archived_by_limit += 1
            self._finish(offset, RecordState.ARCHIVED)
            return
        record.state = RecordState.AVAILABLE
        record.member_id = None
        record.deadline = None
        self._available += 1
        self.changed.add(offset)

    def _finish(self, offset: int, state: RecordState) -> None:
        record = self.records.get(offset)
        if record is None:
            record = self.records[offset] = InFlightRecord(state, 0)
            self._finished += 1
        else:
            if record.state is RecordState.AVAILABLE:
                self._available -= 1
            if record.state not in FINISHED:
                self._finished += 1
        record.state = state
        record.member_id = None
        record.deadline = None
        self.changed.add(offset)

    def _advance_start(self) -> None:
        start = self.start_offset
        while start < self.end_offset:
            record = self.records.get(start)
            if record is None or record.state not in FINISHED:
                break
            del self.records[start]
            self._finished -= 1
            self.changed.discard(start)
            start += 1
        if start != self.start_offset:
            self.start_offset = start
            self.start_changed = True

    # ------------------------------------------------------------------ persisting

    def has_write(self) -> bool:
        return bool(self.changed) or self.start_changed

    def take_write(self, leader_epoch: int = 0) -> WriteData:
        """The state batches changed since the last write (and the start offset), for the persister."""
        batches: list[StateBatch] = []
        for offset in sorted(self.changed):
            record = self.records.get(offset)
            if record is None or record.state is RecordState.ACQUIRED:
                continue
            last = batches[-1] if batches else None
            if (last is not None and last.last_offset + 1 == offset and last.delivery_state == record.state
                    and last.delivery_count == record.delivery_count):
                batches[-1] = StateBatch(last.first_offset, offset, last.delivery_state, last.delivery_count)
            else:
                batches.append(StateBatch(offset, offset, int(record.state), record.delivery_count))
        self.changed.clear()
        self.start_changed = False
        data = WriteData(self.state_epoch, leader_epoch, self.start_offset, tuple(batches), self.delivery_complete_count())
        self._advance_start()
        return data

    def delivery_complete_count(self) -> int:
        """Records past the start offset whose delivery is complete (KIP-1226: what DescribeShareGroupOffsets'
        lag leaves out)."""
        return self._finished
