"""One transactional id's metadata and its transitions (Kafka's TransactionMetadata, sans locking).

Each ``prepare_*`` returns the metadata the transition leads to, a new frozen object; the shard writes
it to ``__transaction_state`` and makes it current in the same step (``TxnShardState.emit``), so live
state is what a replay of the log gives (but for ``last_producer_epoch``, which Kafka does not persist
in value v0 either). A transition from a state that does not allow it is a bug, raised as such.
"""

from __future__ import annotations

import dataclasses

from groupcoord.coordinator.transactions.records import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionLogValue,
)
from groupcoord.coordinator.transactions.state import VALID_PREVIOUS, TxnState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass

MAX_EPOCH = 32767  # Short.MaxValue


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps the last epoch back so that the coordinator can always fence (bump) once more."""
    return epoch >= MAX_EPOCH - 1


TopicPartition = tuple[str, int]


@frozen_dataclass
class TransactionMetadata:
    """A transactional id's state at the coordinator (TransactionMetadata in Kafka)."""
    transactional_id: str
    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition] = frozenset()
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    client_transaction_version: int = 0

    # ------------------------------------------------------------------ reading

    @property
    def epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def has_pending_transaction(self) -> bool:
        return self.state in (TxnState.ONGOING, TxnState.PREPARE_ABORT, TxnState.PREPARE_COMMIT)

    def sorted_partitions(self) -> list[TopicPartition]:
        return sorted(self.partitions)

    # ------------------------------------------------------------------ transitions

    def _to(self, state: TxnState, **changes) -> "TransactionMetadata":
        if self.state not in VALID_PREVIOUS[state]:
            raise RuntimeError(f"transactional id {self.transactional_id!r}: no transition from {self.state.display} "
                               f"to {state.display}")
        changes.setdefault("previous_producer_id", self.previous_producer_id)
        return dataclasses.replace(self, state=state, **changes)

    def prepare_increment_producer_epoch(self, timeout_ms: int, expected_epoch: int | None,
                                         now: int) -> "TransactionMetadata | ErrorCode":
        """InitProducerId on a transactional id with no transaction in flight: the next epoch (0 for a new id)."""
        if self.epoch_exhausted:
            raise RuntimeError(f"no epochs left for producer id {self.producer_id}")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch  # a retry of a bump that succeeded
        else:
            return ErrorCode.producer_fenced
        return self._to(TxnState.EMPTY, producer_epoch=epoch, last_producer_epoch=last, txn_timeout_ms=timeout_ms,
                        partitions=frozenset(), txn_start_timestamp=-1, txn_last_update_timestamp=now,
                        previous_producer_id=self.producer_id)

    def prepare_producer_id_rotation(self, new_producer_id: int, timeout_ms: int, now: int,
                                     record_last_epoch: bool) -> "TransactionMetadata":
        """The epoch is exhausted: a new producer id at epoch 0."""
        if self.has_pending_transaction:
            raise RuntimeError("cannot rotate producer ids while a transaction is pending")
        return self._to(TxnState.EMPTY, producer_id=new_producer_id, producer_epoch=0,
                        last_producer_epoch=self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                        txn_timeout_ms=timeout_ms, partitions=frozenset(), txn_start_timestamp=-1,
                        txn_last_update_timestamp=now, previous_producer_id=self.producer_id)

    def prepare_add_partitions(self, added: frozenset[TopicPartition] | set[TopicPartition],
                               now: int) -> "TransactionMetadata":
        """AddPartitionsToTxn / AddOffsetsToTxn: the transaction starts (or grows)."""
        start = now if self.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT) \
            else self.txn_start_timestamp
        return self._to(TxnState.ONGOING, partitions=self.partitions | frozenset(added), txn_start_timestamp=start,
                        txn_last_update_timestamp=now)

    def prepare_fence_and_abort(self, now: int) -> "TransactionMetadata":
        """Kafka's prepareFenceProducerEpoch followed by the abort it leads to, as one written step: the
        epoch is bumped so the old incarnation can write nothing more, and the transaction is aborted
        (InitProducerId of a new incarnation, or the transaction's timeout)."""
        if self.producer_epoch >= MAX_EPOCH:
            raise RuntimeError("cannot fence a producer at epoch Short.MaxValue")
        # The fenced epoch is kept as the last one: a producer whose transaction timed out may recover by
        # InitProducerId with its id and that epoch (Kafka 4.3 answers it the current epoch, unbumped).
        return self._to(TxnState.PREPARE_ABORT, producer_epoch=self.producer_epoch + 1,
                        last_producer_epoch=self.producer_epoch, txn_last_update_timestamp=now)

    def prepare_abort_or_commit(self, commit: bool, now: int) -> "TransactionMetadata":
        """EndTxn (transaction version 0/1: the epoch stays)."""
        return self._to(TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT, txn_last_update_timestamp=now)

    def prepare_complete(self, now: int) -> "TransactionMetadata":
        """Every marker is written: the transaction is over (transaction version 0/1: the producer id and the
        epochs stay as they are, as Kafka's completeTransitionTo leaves them)."""
        state = TxnState.COMPLETE_COMMIT if self.state is TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
        return self._to(state, partitions=frozenset(), next_producer_id=NO_PRODUCER_ID, txn_last_update_timestamp=now)

    def prepare_dead(self) -> "TransactionMetadata":
        return self._to(TxnState.DEAD, partitions=frozenset())

    # ------------------------------------------------------------------ the record

    def to_value(self) -> TransactionLogValue:
        if self.state is TxnState.EMPTY and self.partitions:
            raise RuntimeError(f"transactional id {self.transactional_id!r} is Empty but has partitions")
        partitions = None
        if self.state is not TxnState.EMPTY:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in self.sorted_partitions():
                by_topic.setdefault(topic, []).append(partition)
            partitions = tuple((t, tuple(ps)) for t, ps in by_topic.items())
        return TransactionLogValue(
            producer_id=self.producer_id, producer_epoch=self.producer_epoch,
            transaction_timeout_ms=self.txn_timeout_ms, transaction_status=self.state.id,
            transaction_partitions=partitions, transaction_last_update_timestamp_ms=self.txn_last_update_timestamp,
            transaction_start_timestamp_ms=self.txn_start_timestamp,
            previous_producer_id=self.previous_producer_id, next_producer_id=self.next_producer_id,
            client_transaction_version=self.client_transaction_version,
        )

    @classmethod
    def from_value(cls, transactional_id: str, value: TransactionLogValue) -> "TransactionMetadata":
        """Kafka's readTxnRecordValue: the last epoch is not in the record, and an Empty one has no partitions."""
        state = TxnState.from_id(value.transaction_status)
        partitions: frozenset[TopicPartition] = frozenset()
        if state is not TxnState.EMPTY and value.transaction_partitions:
            partitions = frozenset((t, p) for t, ps in value.transaction_partitions for p in ps)
        return cls(transactional_id, value.producer_id, value.producer_epoch, value.transaction_timeout_ms, state,
                   partitions, value.transaction_start_timestamp_ms, value.transaction_last_update_timestamp_ms,
                   value.previous_producer_id, value.next_producer_id, NO_PRODUCER_EPOCH,
                   value.client_transaction_version)
