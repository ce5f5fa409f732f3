"""Producer bookkeeping for one partition (Kafka's ProducerStateManager): idempotence and transactions.

Idempotence is on by default in librdkafka and the Java client, so the broker must recognise a retried
batch (acknowledge it with the offset it got the first time) and refuse gaps. Kafka remembers the last
five batches per producer, which is exactly the producers' ``max.in.flight.requests.per.connection`` cap.
The state is rebuilt from the batch headers in the log, so it survives restarts without a snapshot file.

A producer is forgotten once its last batch's timestamp is ``producer.id.expiration.ms`` old (Kafka's
removeExpiredProducers), which bounds the table for brokers that see many short-lived producers. Its next
batch is then accepted at any sequence, as for any producer without state; a retry of a batch appended
before the expiry is no longer recognised as a duplicate. A producer with an open transaction never
expires (its marker is still to come).

Transactions: the first transactional batch of a producer opens its transaction in this partition at that
batch's offset (``current_txn_first_offset``); its end-transaction marker closes it. The last stable offset
(LSO) is the first offset of the earliest transaction not yet decided, or the high watermark when none is
open: a read_committed consumer reads up to it. A decided transaction keeps holding the LSO until its marker
is durable and, for an abort, entered in the ``.txnindex`` (``unsettled``), as Kafka keeps completed but
unreplicated transactions in its first unstable offset.
"""
from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

from groupcoord.protocol.frozen import frozen_dataclass

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1
CACHED_BATCHES = 5
NO_OFFSET = -1
TXN_PENDING_OFFSET = -2
"""``current_txn_first_offset`` of a producer whose first transactional batch is admitted but not yet given
its offsets by the log (``begin_txn`` fills it in)."""


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
    """One producer id's state in a partition: epoch, recent batch sequences (duplicate detection) and its open
    transaction."""
    producer_id: int
    epoch: int
    batches: deque[BatchSequence] = field(default_factory=lambda: deque(maxlen=CACHED_BATCHES))
    current_txn_first_offset: int = NO_OFFSET
    """Where this producer's open transaction began in this partition; -1 when none is open."""
    coordinator_epoch: int = -1
    """The epoch of the transaction coordinator that wrote this producer's last marker here."""
    marker_timestamp: int = NO_TIMESTAMP

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_timestamp(self) -> int:
        """The timestamp of the producer's latest batch (its max timestamp, the append time on
        LogAppendTime topics) or marker: what expiry measures idleness from, as Kafka's ProducerStateEntry
        does."""
        return max(self.batches[-1].timestamp if self.batches else NO_TIMESTAMP, self.marker_timestamp)

    @property
    def in_transaction(self) -> bool:
        return self.current_txn_first_offset != NO_OFFSET

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
    INVALID_TXN_STATE = "invalid_txn_state"   # a plain batch from a producer with an open transaction


class MarkerVerdict(enum.Enum):
    APPEND = "append"
    INVALID_PRODUCER_EPOCH = "invalid_producer_epoch"
    COORDINATOR_FENCED = "transaction_coordinator_fenced"


@frozen_dataclass
class CompletedTxn:
    """A transaction decided by a marker (Kafka's CompletedTxn)."""
    producer_id: int
    first_offset: int
    last_offset: int          # the marker's offset
    is_aborted: bool


@frozen_dataclass
class OngoingTxn:
    """An open transaction in a partition: where it began (what the last stable offset waits for)."""
    producer_id: int
    producer_epoch: int
    first_offset: int
    last_timestamp: int


@frozen_dataclass
class SequenceCheck:
    """The verdict on a batch's producer sequence (append, a duplicate of a cached batch, or an error)."""
    verdict: SequenceVerdict
    duplicate_of: BatchSequence | None = None
    message: str | None = None


_APPEND = SequenceCheck(SequenceVerdict.APPEND)


class PartitionProducerState:
    """Per-partition producer table: checks a batch's producer fields before append, records them after."""

    def __init__(self) -> None:
        self._producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}
        """Open transactions in this partition: producer id -> first offset."""
        self.unsettled: dict[int, CompletedTxn] = {}
        """Transactions whose marker is appended but not yet durable (and indexed): by the marker's offset."""

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self._producers.get(producer_id)

    def entries(self) -> list[ProducerEntry]:
        return list(self._producers.values())

    def __len__(self) -> int:
        return len(self._producers)

    def check(self, producer_id: int, epoch: int, first_seq: int, record_count: int,
              is_transactional: bool = False) -> SequenceCheck:
        """Kafka's duplicate detection, then its epoch and sequence checks, then the transaction check, in
        that order."""
        verdict = self._check_sequence(producer_id, epoch, first_seq, record_count)
        if verdict is _APPEND and not is_transactional:
            current = self._producers.get(producer_id)
            if current is not None and current.in_transaction:
                return SequenceCheck(
                    SequenceVerdict.INVALID_TXN_STATE,
                    message=f"Expected transactional write from producer {producer_id}")
        return verdict

    def _check_sequence(self, producer_id: int, epoch: int, first_seq: int, record_count: int) -> SequenceCheck:
        if producer_id == NO_PRODUCER_ID:
            return _APPEND
        current = self._producers.get(producer_id)
        if current is None:
            # No state (new producer, or its batches are gone): Kafka accepts any sequence.
            return _APPEND
        batches = current.batches
        if epoch == current.epoch and batches:
            last = batches[-1].last_seq
            if first_seq == last + 1 or (first_seq == 0 and last == INT32_MAX):
                # The next batch in order, nearly every append: no cached batch can be its duplicate (they all
                # end at or before ``last``; five batches cannot span the 2**31 sequences back round to it).
                return _APPEND
        last_seq = increment_sequence(first_seq, record_count - 1)
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
               first_offset: int, last_offset: int, timestamp: int,
               is_transactional: bool = False) -> BatchSequence | None:
        """Remember an appended batch (also used when replaying the log at start-up). A transactional batch
        of a producer without an open transaction opens one: at ``first_offset`` when known (replay), else
        pending until ``begin_txn`` is given the offset. Returns the entry made (None when none was: no
        producer id, or an older epoch), whose offsets the caller fills in once its append completed (as
        ``settle`` does, without looking it up again)."""
        if producer_id == NO_PRODUCER_ID:
            return None
        current = self._producers.get(producer_id)
        if current is None:
            current = ProducerEntry(producer_id, epoch)
            self._producers[producer_id] = current
        elif epoch > current.epoch:
            current.epoch = epoch
            current.batches.clear()
        elif epoch < current.epoch:
            return None
        batch = BatchSequence(first_seq, increment_sequence(first_seq, record_count - 1), first_offset, last_offset,
                              timestamp)
        current.batches.append(batch)
        if is_transactional and not current.in_transaction:
            if first_offset >= 0:
                current.current_txn_first_offset = first_offset
                self.ongoing[producer_id] = first_offset
            else:
                current.current_txn_first_offset = TXN_PENDING_OFFSET
        return batch

    def begin_txn(self, producer_id: int, first_offset: int) -> None:
        """The log assigned the offsets of a batch admitted while its transaction was pending: the
        transaction begins there (called under the log's append lock, before the batch can be read)."""
        current = self._producers.get(producer_id)
        if current is not None and current.current_txn_first_offset == TXN_PENDING_OFFSET:
            current.current_txn_first_offset = first_offset
            self.ongoing[producer_id] = first_offset

    # ---- transaction markers --------------------------------------------------------------
    def check_marker(self, producer_id: int, epoch: int, coordinator_epoch: int) -> tuple[MarkerVerdict, str | None]:
        """Kafka's appendEndTxnMarker checks: the producer epoch may not go back, nor the coordinator epoch."""
        current = self._producers.get(producer_id)
        if current is None:
            return MarkerVerdict.APPEND, None
        if epoch < current.epoch:
            return (MarkerVerdict.INVALID_PRODUCER_EPOCH,
                    f"Epoch of producer {producer_id} is {epoch}, which is smaller than the last seen epoch "
                    f"{current.epoch}")
        if current.coordinator_epoch > coordinator_epoch:
            return (MarkerVerdict.COORDINATOR_FENCED,
                    f"Invalid coordinator epoch for producerId {producer_id}: {coordinator_epoch} (zombie), "
                    f"{current.coordinator_epoch} (current)")
        return MarkerVerdict.APPEND, None

    def complete_txn(self, producer_id: int, epoch: int, coordinator_epoch: int, marker_offset: int,
                     committed: bool, timestamp: int, *, settled: bool = True) -> CompletedTxn | None:
        """Apply an end-transaction marker at ``marker_offset``: the producer's open transaction (if it
        wrote anything here) is decided. With ``settled=False`` the transaction keeps holding the LSO until
        ``settle_txn``; replay applies settled markers."""
        current = self._producers.get(producer_id)
        if current is None:
            current = ProducerEntry(producer_id, epoch)
            self._producers[producer_id] = current
        completed = None
        if current.in_transaction:
            first = current.current_txn_first_offset
            if first < 0:     # its batch's offsets are not assigned yet: cannot happen behind one append lock
                first = marker_offset
            completed = CompletedTxn(producer_id, first, marker_offset, not committed)
            if not settled:
                self.unsettled[marker_offset] = completed
        if epoch != current.epoch:
            current.epoch = epoch
            current.batches.clear()
        current.coordinator_epoch = coordinator_epoch
        current.marker_timestamp = max(current.marker_timestamp, timestamp)
        current.current_txn_first_offset = NO_OFFSET
        self.ongoing.pop(producer_id, None)
        return completed

    def settle_txn(self, marker_offset: int) -> None:
        """The marker at ``marker_offset`` is durable (and indexed): its transaction stops holding the LSO."""
        self.unsettled.pop(marker_offset, None)

    def first_unstable_offset(self) -> int | None:
        firsts = list(self.ongoing.values())
        firsts.extend(txn.first_offset for txn in self.unsettled.values())
        return min(firsts) if firsts else None

    def last_stable_offset(self, high_watermark: int) -> int:
        """The LSO: the first offset of the earliest undecided transaction, capped by the high watermark."""
        first = self.first_unstable_offset()
        return high_watermark if first is None else min(first, high_watermark)

    def lso_after(self, completed: CompletedTxn) -> int:
        """Kafka's lastStableOffset(completedTxn): where the LSO stands once this transaction is decided —
        the first open transaction of another producer, else just past the marker. Kept in the .txnindex."""
        others = [first for pid, first in self.ongoing.items() if pid != completed.producer_id and first >= 0]
        others.extend(txn.first_offset for offset, txn in self.unsettled.items()
                      if txn.producer_id != completed.producer_id and offset != completed.last_offset)
        return min(others) if others else completed.last_offset + 1

    def ongoing_txns(self) -> list[OngoingTxn]:
        return [OngoingTxn(pid, self._producers[pid].epoch, first, self._producers[pid].last_timestamp)
                for pid, first in sorted(self.ongoing.items(), key=lambda item: item[1])
                if pid in self._producers]

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Forget the producers idle for ``expiration_ms`` or longer, except those with an open transaction
        (Kafka's isProducerExpired). Returns the producer ids removed."""
        expired = [pid for pid, entry in self._producers.items()
                   if not entry.in_transaction and now_ms - entry.last_timestamp >= expiration_ms]
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
        if entry is not None and entry.current_txn_first_offset == TXN_PENDING_OFFSET:
            entry.current_txn_first_offset = NO_OFFSET

    def restore(self, producer_id: int, epoch: int, current_txn_first_offset: int, coordinator_epoch: int,
                marker_timestamp: int) -> None:
        """Load a producer's transaction fields from a snapshot (after its batches were ``record``ed)."""
        entry = self._producers.get(producer_id)
        if entry is None:
            entry = self._producers[producer_id] = ProducerEntry(producer_id, epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.marker_timestamp = marker_timestamp
        if current_txn_first_offset >= 0:
            entry.current_txn_first_offset = current_txn_first_offset
            self.ongoing[producer_id] = current_txn_first_offset

    def _find(self, producer_id: int, first_seq: int) -> BatchSequence | None:
        entry = self._producers.get(producer_id)
        if entry is None:
            return None
        for batch in reversed(entry.batches):  # (a loop, not a generator: no frame per look-up)
            if batch.first_seq == first_seq:
                return batch
        return None

