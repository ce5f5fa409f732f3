"""What the cleaner must know of transactions (Kafka's CleanedTransactionMetadata).

Walking the cleaned range in offset order with the aborted transactions taken from the ``.txnindex``
(``PartitionLog.collect_aborted_txns``), it tells for each batch whether it can be discarded:

- a transactional data batch of a producer whose aborted transaction is open at that offset is aborted
  data: removed whatever its keys;
- an ABORT marker is kept while batches of its transaction were still seen in this pass (they are being
  removed now; the marker goes on a later pass) and it then stays in the cleaned segment's ``.txnindex``;
  once no batch of the transaction is left it may go;
- a COMMIT marker may go once no batch of its transaction is left in front of it.

A marker that may go is not dropped at once: the cleaner first stamps it with a delete horizon
(``delete.retention.ms`` from now, attribute bit 6) and removes it on a pass after the horizon, so a
consumer that read the transaction's data before it was cleaned still meets its marker.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from groupcoord.protocol.control_records import ControlRecordType, control_type_of, read_end_txn_marker
from groupcoord.protocol.record_batch import BatchHeader, decode_records
from groupcoord.storage.txn_index import AbortedTxn


class _AbortedInProgress:
    __slots__ = ("txn", "seen_batch")

    def __init__(self, txn: AbortedTxn) -> None:
        self.txn = txn
        self.seen_batch = False


class CleanedTransactions:
    def __init__(self, aborted: list[AbortedTxn]) -> None:
        self._pending = [(txn.first_offset, txn.last_offset, txn.producer_id, txn) for txn in aborted]
        heapq.heapify(self._pending)
        self._aborted: dict[int, _AbortedInProgress] = {}
        self._committed: set[int] = set()
        self.kept_aborts: list[AbortedTxn] = []
        """The aborted transactions whose marker stays (with their data seen in this pass): the cleaned
        segments' ``.txnindex`` entries."""

    def _consume_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            txn = heapq.heappop(self._pending)[3]
            self._aborted.setdefault(txn.producer_id, _AbortedInProgress(txn))

    def on_batch(self, header: BatchHeader) -> bool:
        """A data batch: True when it belongs to an aborted transaction (discard it)."""
        self._consume_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        aborted = self._aborted.get(header.producer_id)
        if aborted is not None:
            aborted.seen_batch = True
            return True
        self._committed.add(header.producer_id)
        return False

    def on_control(self, header: BatchHeader, batch: bytes) -> bool:
        """A control batch: True when it may be removed (after its delete horizon)."""
        self._consume_up_to(header.last_offset)
        records = decode_records(batch, 0, header) if header.records_count else []
        if not records:
            return True         # an empty control batch: already cleaned
        kind = control_type_of(records[0].key)
        producer_id = header.producer_id
        if kind is ControlRecordType.ABORT:
            aborted = self._aborted.pop(producer_id, None)
            if aborted is not None and aborted.seen_batch:
                self.kept_aborts.append(aborted.txn)
                return False
            return True
        if kind is ControlRecordType.COMMIT:
            if producer_id in self._committed:
                self._committed.discard(producer_id)
                return False
            return True
        return False


@dataclass(slots=True)
class LogTransactions:
    """The transactions of a whole log as its batches tell them, for the cleaner."""
    aborted: list[AbortedTxn] = field(default_factory=list)
    first_unstable_offset: int | None = None
    """The first offset of the earliest transaction with no marker yet: nothing from there is cleaned."""


async def scan_transactions(log: Any) -> LogTransactions:
    """Walk the log's batches (up to its high watermark) and find its aborted and still open transactions.

    The cleaner reads them from the log itself rather than from the ``.txnindex`` alone, so it applies the
    same rules to logs whose markers are written by the group coordinator (``__consumer_offsets``: its
    TxnOffsetCommit records) and does not depend on the producer state being loaded to know the LSO."""
    open_txns: dict[int, int] = {}
    found = LogTransactions()
    async for header, batch in log.batches(log.log_start_offset):
        if header.producer_id < 0 or not header.is_transactional:
            continue
        if header.is_control:
            first = open_txns.pop(header.producer_id, None)
            if first is None:
                continue
            marker = read_end_txn_marker(batch, 0, header) if header.records_count else None
            if marker is not None and not marker.committed:
                found.aborted.append(AbortedTxn(header.producer_id, first, header.base_offset, -1))
            continue
        open_txns.setdefault(header.producer_id, header.base_offset)
    if open_txns:
        found.first_unstable_offset = min(open_txns.values())
    return found
