"""The transactions of one ``__transaction_state`` partition (Kafka's TransactionStateManager for one
partition, with the TransactionCoordinator's checks), sans I/O.

Every operation takes ``now`` and returns ``Effects``: the ``__transaction_state`` records to append and the
replies to release once they are durable. When a transaction reaches PrepareCommit or PrepareAbort the
shard also asks, through ``markers_token``, to be told once that record is durable: only then are the
markers written (Kafka writes markers after the prepare record is replicated), and the transaction
completes in a later operation (``complete``). Replaying the log gives the same state; a transaction
found in a Prepare state after loading still has its markers to write (``prepared()``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import structlog

from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_availability import availability_error
from groupcoord.coordinator.transactions.metadata import TopicPartition, TransactionMetadata, is_epoch_exhausted
from groupcoord.coordinator.transactions.observer import TransactionObserverAdapter
from groupcoord.coordinator.transactions.records import (
    NO_PRODUCER_EPOCH,
    TransactionLogKey,
    TransactionLogValue,
    UnknownTransactionKey,
)
from groupcoord.coordinator.transactions.state import TxnState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class ExpectedProducer:
    """InitProducerId v3+: the producer id and epoch a producer recovering from an error had."""

    producer_id: int
    producer_epoch: int


def init_error(code: ErrorCode) -> dict:
    return {"throttle_time": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}


class TxnShard:
    def __init__(self, partition: int, config: Any, *, new_producer_id: Callable[[], int],
                 markers_token: Callable[[TransactionMetadata], Any],
                 send_markers: Callable[[TransactionMetadata], None] = lambda _m: None,
                 observer: object | None = None) -> None:
        self.partition = partition
        self.config = config
        self.new_producer_id = new_producer_id
        self.markers_token = markers_token
        self.send_markers = send_markers
        self.observer = TransactionObserverAdapter(observer)
        self.log = structlog.get_logger("groupcoord.transactions").bind(shard=partition)
        self.txns: dict[str, TransactionMetadata] = {}
        self.loading = True
        self.unavailable: str | None = None
        self._next_abort_check: int | None = None
        self._next_expiry_check: int | None = None

    # ------------------------------------------------------------------ what the runtime needs

    def group_count(self) -> int:
        return len(self.txns)

    def begin_load(self) -> None:
        self.loading = True
        self.unavailable = None
        self.txns.clear()
        self._next_abort_check = self._next_expiry_check = None

    def replay(self, key: Any, value: Any, now: int, producer_id: int = -1) -> None:
        if isinstance(key, UnknownTransactionKey):
            self.log.warning("skipping __transaction_state record of unknown key version", version=key.version)
            return
        if value is None:
            self.txns.pop(key.transactional_id, None)
            return
        assert isinstance(value, TransactionLogValue)
        self.txns[key.transactional_id] = TransactionMetadata.from_value(key.transactional_id, value)

    def replay_end_transaction(self, producer_id: int, committed: bool, now: int) -> None:
        """``__transaction_state`` holds no transactional batches; nothing to settle."""

    def finish_load(self, now: int) -> None:
        """Serve; a transaction found prepared (a restart, or a reload after a failed append, between the
        prepare record and completion) has its markers written again (Kafka's loadTransactionsForTxnTopicPartition)."""
        self._next_abort_check = now + self.config.transaction_abort_timed_out_transaction_cleanup_interval_ms
        self._next_expiry_check = now + self.config.transaction_remove_expired_transaction_cleanup_interval_ms
        self.loading = False
        for metadata in self.prepared():
            self.log.info("completing a transaction found prepared on load", transactional_id=metadata.transactional_id,
                          state=metadata.state.display)
            self.send_markers(metadata)

    def next_deadline(self) -> int | None:
        deadlines = [d for d in (self._next_abort_check, self._next_expiry_check) if d is not None]
        return min(deadlines) if deadlines else None

    def tick(self, now: int) -> Effects:
        fx = Effects()
        if self._next_abort_check is not None and now >= self._next_abort_check:
            fx.extend(self.abort_timed_out(now))
            self._next_abort_check = now + self.config.transaction_abort_timed_out_transaction_cleanup_interval_ms
        if self._next_expiry_check is not None and now >= self._next_expiry_check:
            fx.extend(self.expire(now))
            self._next_expiry_check = now + self.config.transaction_remove_expired_transaction_cleanup_interval_ms
        return fx

    # ------------------------------------------------------------------ writing

    def availability_error(self) -> ErrorCode | None:
        return availability_error(self.loading, self.unavailable)

    def _emit(self, fx: Effects, metadata: TransactionMetadata) -> None:
        """Write the transition and make it current: live state is what a replay of the log gives."""
        fx.write(TransactionLogKey(metadata.transactional_id), metadata.to_value())
        self.txns[metadata.transactional_id] = metadata
        if metadata.state.is_prepare:
            fx.reply(self.markers_token(metadata), {"error_code": ErrorCode.none})

    # ------------------------------------------------------------------ InitProducerId

    def init_producer_id(self, transactional_id: str, timeout_ms: int, expected: ExpectedProducer | None,
                         token: Any, now: int) -> Effects:
        fx = Effects()
        error = self.availability_error()
        if error is not None:
            fx.reply(token, init_error(error))
            return fx
        current = self.txns.get(transactional_id)
        if current is None:
            current = TransactionMetadata(transactional_id, self.new_producer_id(), NO_PRODUCER_EPOCH, timeout_ms,
                                          TxnState.EMPTY, txn_last_update_timestamp=now)
        # Kafka's isValidProducerId: a new id, the current producer id, or a retry of a rotation the
        # producer never heard the answer to (the previous id with its exhausted epoch).
        if expected is not None and not (
            current.producer_epoch == NO_PRODUCER_EPOCH
            or expected.producer_id == current.producer_id
            or (expected.producer_id == current.previous_producer_id and is_epoch_exhausted(expected.producer_epoch))
        ):
            fx.reply(token, init_error(ErrorCode.producer_fenced))
            return fx
        state = current.state
        if state.is_prepare:
            fx.reply(token, init_error(ErrorCode.concurrent_transactions))
            return fx
        if state is TxnState.ONGOING:
            # Fence the running incarnation and abort its transaction; the new one retries (and is then
            # given the epoch after this one) once the abort is complete.
            self.observer.on_producer_fenced(transactional_id)
            self._emit(fx, current.prepare_fence_and_abort(now))
            fx.reply(token, init_error(ErrorCode.concurrent_transactions))
            return fx
        if current.epoch_exhausted and (expected is None or expected.producer_epoch == current.producer_epoch):
            result: TransactionMetadata | ErrorCode = current.prepare_producer_id_rotation(
                self.new_producer_id(), timeout_ms, now, expected is not None)
        else:
            result = current.prepare_increment_producer_epoch(
                timeout_ms, None if expected is None else expected.producer_epoch, now)
        if isinstance(result, ErrorCode):
            fx.reply(token, init_error(result))
            return fx
        if current.producer_epoch != NO_PRODUCER_EPOCH and result.producer_epoch != current.producer_epoch:
            self.observer.on_producer_fenced(transactional_id)
        self._emit(fx, result)
        self.log.info("initialized transactional id", transactional_id=transactional_id,
                      producer_id=result.producer_id, producer_epoch=result.producer_epoch)
        fx.reply(token, {"throttle_time": 0, "error_code": ErrorCode.none, "producer_id": result.producer_id,
                         "producer_epoch": result.producer_epoch})
        return fx

    # ------------------------------------------------------------------ AddPartitionsToTxn / AddOffsetsToTxn

    def _producer_error(self, transactional_id: str, producer_id: int,
                        producer_epoch: int) -> tuple[TransactionMetadata | None, ErrorCode | None]:
        error = self.availability_error()
        if error is not None:
            return None, error
        current = self.txns.get(transactional_id)
        if current is None or current.state is TxnState.DEAD or current.producer_id != producer_id:
            return None, ErrorCode.invalid_producer_id_mapping
        if current.producer_epoch != producer_epoch:
            return None, ErrorCode.producer_fenced
        return current, None

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: Iterable[TopicPartition], token: Any, now: int) -> Effects:
        """Kafka's handleAddPartitionsToTransaction; the reply is {"error_code"} for every partition."""
        fx = Effects()
        current, error = self._producer_error(transactional_id, producer_id, producer_epoch)
        if current is not None:
            added = frozenset(partitions)
            if current.state.is_prepare:
                error = ErrorCode.concurrent_transactions
            elif current.state is TxnState.ONGOING and added <= current.partitions:
                error = ErrorCode.none
            else:
                if current.state is not TxnState.ONGOING:
                    self.observer.on_transaction_started(transactional_id)
                self._emit(fx, current.prepare_add_partitions(added, now))
                error = ErrorCode.none
        fx.reply(token, {"error_code": error})
        return fx

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: Iterable[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        """Kafka's handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4 verifyOnly, and the check a
        transactional Produce makes): which partitions the transaction already holds."""
        partitions = list(partitions)
        current, error = self._producer_error(transactional_id, producer_id, producer_epoch)
        if current is not None and current.state.is_prepare:
            error = ErrorCode.concurrent_transactions
        if error is not None:
            return {tp: error for tp in partitions}
        return {tp: ErrorCode.none if tp in current.partitions else ErrorCode.transaction_abortable
                for tp in partitions}

    # ------------------------------------------------------------------ EndTxn

    def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                        token: Any, now: int) -> Effects:
        """Kafka's handleEndTransaction for a client of transaction version 0/1 (the epoch stays)."""
        fx = Effects()
        error = self.availability_error()
        current = self.txns.get(transactional_id) if error is None else None
        if error is None:
            if current is None or current.state is TxnState.DEAD or current.producer_id != producer_id:
                error = ErrorCode.invalid_producer_id_mapping
            elif producer_epoch != current.producer_epoch:
                error = ErrorCode.producer_fenced
            elif current.state is TxnState.ONGOING:
                self._emit(fx, current.prepare_abort_or_commit(commit, now))
                error = ErrorCode.none
            elif current.state is TxnState.COMPLETE_COMMIT:
                error = ErrorCode.none if commit else ErrorCode.invalid_txn_state
            elif current.state is TxnState.COMPLETE_ABORT:
                error = ErrorCode.invalid_txn_state if commit else ErrorCode.none
            elif current.state is TxnState.PREPARE_COMMIT:
                error = ErrorCode.concurrent_transactions if commit else ErrorCode.invalid_txn_state
            elif current.state is TxnState.PREPARE_ABORT:
                error = ErrorCode.invalid_txn_state if commit else ErrorCode.concurrent_transactions
            else:
                error = ErrorCode.invalid_txn_state  # Empty: there is no transaction to end
        fx.reply(token, {"throttle_time": 0, "error_code": error})
        return fx

    def complete(self, transactional_id: str, producer_id: int, producer_epoch: int, token: Any, now: int) -> Effects:
        """The markers of a prepared transaction are written: CompleteCommit or CompleteAbort."""
        fx = Effects()
        fx.reply(token, {"error_code": ErrorCode.none})
        current = self.txns.get(transactional_id)
        if (current is None or not current.state.is_prepare or current.producer_id != producer_id
                or current.producer_epoch != producer_epoch):
            return fx  # someone else moved it on (cannot happen while it is Prepare*, but the log is the truth)
        committed = current.state is TxnState.PREPARE_COMMIT
        self._emit(fx, current.prepare_complete(now))
        self.observer.on_transaction_ended(transactional_id, committed)
        self.log.info("transaction completed", transactional_id=transactional_id, producer_id=producer_id,
                      producer_epoch=producer_epoch, result="COMMIT" if committed else "ABORT")
        return fx

    def prepared(self) -> list[TransactionMetadata]:
        """Transactions whose markers are still to be written (after a load: a restart between prepare and complete)."""
        return [m for m in self.txns.values() if m.state.is_prepare]

    # ------------------------------------------------------------------ timers

    def abort_timed_out(self, now: int) -> Effects:
        """Kafka's abortTimedOutTransactions: an Ongoing transaction past its timeout is aborted with a
        bumped epoch, so its producer is fenced from writing more to it."""
        fx = Effects()
        for metadata in list(self.txns.values()):
            if metadata.state is TxnState.ONGOING and metadata.txn_start_timestamp + metadata.txn_timeout_ms < now:
                self.log.info("aborting transaction past its timeout", transactional_id=metadata.transactional_id,
                              producer_id=metadata.producer_id, timeout_ms=metadata.txn_timeout_ms)
                self.observer.on_transaction_timed_out(metadata.transactional_id)
                self._emit(fx, metadata.prepare_fence_and_abort(now))
        return fx

    def expire(self, now: int) -> Effects:
        """Kafka's removeExpiredTransactionalIds: a transactional id idle past transactional.id.expiration.ms
        is forgotten (a tombstone in the log)."""
        fx = Effects()
        expiration = self.config.transactional_id_expiration_ms
        for metadata in list(self.txns.values()):
            if metadata.state.expiration_allowed and metadata.txn_last_update_timestamp + expiration <= now:
                fx.write(TransactionLogKey(metadata.transactional_id), None)
                del self.txns[metadata.transactional_id]
                self.log.info("transactional id expired", transactional_id=metadata.transactional_id)
        return fx

    # ------------------------------------------------------------------ reading

    def describe(self, transactional_id: str) -> dict:
        """One DescribeTransactions entry."""
        row = {"error_code": ErrorCode.none, "transactional_id": transactional_id, "transaction_state": "",
               "transaction_timeout": 0, "transaction_start_time": -1, "producer_id": -1,
               "producer_epoch": -1, "topics": []}
        error = self.availability_error()
        metadata = self.txns.get(transactional_id) if error is None else None
        if error is None and not transactional_id:
            error = ErrorCode.invalid_request
        elif error is None and (metadata is None or metadata.state is TxnState.DEAD):
            error = ErrorCode.transactional_id_not_found
        if error is not None:
            return {**row, "error_code": error}
        by_topic: dict[str, list[int]] = {}
        for topic, partition in metadata.sorted_partitions():
            by_topic.setdefault(topic, []).append(partition)
        return {**row, "transaction_state": metadata.state.display,
                "transaction_timeout": metadata.txn_timeout_ms,
                "transaction_start_time": metadata.txn_start_timestamp,
                "producer_id": metadata.producer_id, "producer_epoch": metadata.producer_epoch,
                "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]}

    def list(self, state_names: set[str], producer_ids: set[int], duration_ms: int, now: int) -> list[dict]:
        """Kafka's listTransactionStates: filters combine with AND, an empty one matches all; a name that is
        no state matches nothing; the duration filter keeps what started more than that long ago (Kafka
        measures from the start timestamp as it is, -1 for an Empty one, which so always passes)."""
        states = {TxnState.from_name(n) for n in state_names} - {None}
        out = []
        for metadata in self.txns.values():
            if metadata.state is TxnState.DEAD:
                continue
            if producer_ids and metadata.producer_id not in producer_ids:
                continue
            if state_names and metadata.state not in states:
                continue
            if duration_ms >= 0 and now - metadata.txn_start_timestamp <= duration_ms:
                continue
            out.append({"transactional_id": metadata.transactional_id, "producer_id": metadata.producer_id,
                        "transaction_state": metadata.state.display})
        return out
