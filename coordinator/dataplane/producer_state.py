"""Idempotent-producer bookkeeping for one partition (Kafka's ProducerStateManager, minus transactions).

Idempotence is on by default in librdkafka and the Java client, so the broker must recognise a retried
batch (acknowledge it with the offset it got the first time) and refuse gaps. Kafka remembers the last
five batches per producer, which is exactly the producers' ``max.in.flight.requests.per.connection`` cap.
The state is rebuilt from the batch headers in the log, so it survives restarts without a snapshot file.

A producer is forgotten once its last batch's timestamp is ``producer.id.expiration.ms`` old (Kafka's
removeExpiredProducers), which bounds the table for brokers that see many short-lived producers. Its next
batch is then accepted at any sequence, as for any producer without state; a retry of a batch appended
before the expiry is no longer recognised as a duplicate.
"""
from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1
CACHED_BATCHES = 5


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequences wrap from Integer.MAX_VALUE back to 0, as in Kafka's DefaultRecordBatch."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def sequence_count(first_seq: int, last_seq: int) -> int:
    """How many records the (possibly wrapped) sequence range first_seq..last_seq covers."""
    return (last_seq - first_seq) % (INT32_MAX + 1) + 1


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


@dataclass(slots=True)
class BatchSequence:
    """Where one appended batch of a producer landed: its sequence range and its offsets (-1 until the
    append that was admitted with this range has completed, see ``settle``)."""
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque[BatchSequence] = field(default_factory=lambda: deque(maxlen=CACHED_BATCHES))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_timestamp(self) -> int:
        """The timestamp of the producer's latest batch (its max timestamp, the append time on
        LogAppendTime topics): what expiry measures idleness from, as Kafka's ProducerStateEntry does."""
        return self.batches[-1].timestamp if self.batches else NO_TIMESTAMP

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchSequence | None:
        if epoch != self.epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None


class SequenceVerdict(enum.Enum):
    APPEND = "append"                  # new, in-order batch: append it, then call ``record``
    DUPLICATE = "duplicate"            # a retry of a cached batch: answer with its original offset
    INVALID_PRODUCER_EPOCH = "invalid_producer_epoch"
    OUT_OF_ORDER_SEQUENCE = "out_of_order_sequence"


@dataclass(frozen=True, slots=True)
class SequenceCheck:
    verdict: SequenceVerdict
    duplicate_of: BatchSequence | None = None
    message: str | None = None


_APPEND = SequenceCheck(SequenceVerdict.APPEND)


class PartitionProducerState:
    """Per-partition producer table: checks a batch's producer fields before append, records them after."""

    def __init__(self) -> None:
        self._producers: dict[int, ProducerEntry] = {}

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self._producers.get(producer_id)

    def entries(self) -> list[ProducerEntry]:
        return list(self._producers.values())

    def __len__(self) -> int:
        return len(self._producers)

    def check(self, producer_id: int, epoch: int, first_seq: int, record_count: int) -> SequenceCheck:
        """Kafka's duplicate detection, then its epoch and sequence checks, in that order."""
        if producer_id == NO_PRODUCER_ID:
            return _APPEND
        last_seq = increment_sequence(first_seq, record_count - 1)
        current = self._producers.get(producer_id)
        if current is None:
            # No state (new producer, or its batches are gone): Kafka accepts any sequence.
            return _APPEND
        duplicate = current.find_duplicate(epoch, first_seq, last_seq)
        if duplicate is not None:
            return SequenceCheck(SequenceVerdict.DUPLICATE, duplicate_of=duplicate)
        if epoch < current.epoch:
            return SequenceCheck(
                SequenceVerdict.INVALID_PRODUCER_EPOCH,
                message=f"Epoch of producer {producer_id} at offset is {epoch}, which is smaller than the "
                        f"last seen epoch {current.epoch}")
        if epoch != current.epoch:
            if first_seq != 0:
                return SequenceCheck(
                    SequenceVerdict.OUT_OF_ORDER_SEQUENCE,
                    message=f"Invalid sequence number for new epoch of producer {producer_id} at epoch "
                            f"{epoch} (request epoch), {first_seq} (seq. number), {current.epoch} (current "
                            "producer epoch)")
            return _APPEND
        if current.batches and not in_sequence(current.last_seq, first_seq):
            return SequenceCheck(
                SequenceVerdict.OUT_OF_ORDER_SEQUENCE,
                message=f"Out of order sequence number for producer {producer_id} at epoch {epoch}: "
                        f"{first_seq} (incoming seq. number), {current.last_seq} (current end sequence "
                        "number)")
        return _APPEND

    def record(self, producer_id: int, epoch: int, first_seq: int, record_count: int,
               first_offset: int, last_offset: int, timestamp: int) -> None:
        """Remember an appended batch (also used when replaying the log at start-up)."""
        if producer_id == NO_PRODUCER_ID:
            return
        current = self._producers.get(producer_id)
        if current is None or epoch > current.epoch:
            current = ProducerEntry(producer_id, epoch)
            self._producers[producer_id] = current
        elif epoch < current.epoch:
            return
        current.batches.append(BatchSequence(
            first_seq, increment_sequence(first_seq, record_count - 1), first_offset, last_offset, timestamp))

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Forget the producers idle for ``expiration_ms`` or longer (Kafka's isProducerExpired; without
        transactions no producer is kept for an ongoing one). Returns the producer ids removed."""
        expired = [pid for pid, entry in self._producers.items()
                   if now_ms - entry.last_timestamp >= expiration_ms]
        for pid in expired:
            del self._producers[pid]
        return expired

    def settle(self, producer_id: int, first_seq: int, first_offset: int, last_offset: int) -> None:
        """Fill in the offsets of a batch recorded before its append completed."""
        batch = self._find(producer_id, first_seq)
        if batch is not None:
            batch.first_offset, batch.last_offset = first_offset, last_offset

    def discard(self, producer_id: int, first_seq: int) -> None:
        """Forget a recorded batch whose append failed, so that the producer's retry is appended."""
        entry = self._producers.get(producer_id)
        batch = self._find(producer_id, first_seq)
        if entry is not None and batch is not None:
            entry.batches.remove(batch)

    def _find(self, producer_id: int, first_seq: int) -> BatchSequence | None:
        entry = self._producers.get(producer_id)
        if entry is None:
            return None
        return next((b for b in reversed(entry.batches) if b.first_seq == first_seq), None)

