"""Writing end-transaction markers into data partitions (the data side of Kafka's WriteTxnMarkers).

The transaction coordinator decides a transaction, then asks every partition the transaction wrote to for
a COMMIT or ABORT control batch carrying the producer id and epoch. Here each marker is checked against the
partition's producer table (a stale producer epoch: INVALID_PRODUCER_EPOCH; an older coordinator epoch:
TRANSACTION_COORDINATOR_FENCED), appended as acks=all would append it, and applied: the producer's open
transaction ends, an aborted one enters the ``.txnindex`` of the marker's segment, and only then does the
last stable offset move past the transaction and parked read_committed fetches wake. ``__consumer_offsets``
partitions never come here; the group coordinator writes its own markers.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable

import structlog

from groupcoord.protocol.control_records import end_txn_marker_batch
from groupcoord.protocol.errors import ErrorCode

from groupcoord.coordinator.clock import Clock
from groupcoord.coordinator.dataplane.producer_state import CompletedTxn, MarkerVerdict
from groupcoord.coordinator.dataplane.producer_states import ProducerStates, aborted_entry
from groupcoord.coordinator.dataplane.topics import TopicCatalog

_log = structlog.get_logger("groupcoord.dataplane.txn_markers")

TopicPartition = tuple[str, int]


@dataclass
class TxnMarker:
    """One WriteTxnMarkers entry: a producer's transaction, decided, for these partitions."""
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    partitions: list[TopicPartition] = field(default_factory=list)


class TxnMarkerWriter:
    def __init__(self, catalog: TopicCatalog, states: ProducerStates, clock: Clock,
                 on_stable: Callable[[TopicPartition], None]) -> None:
        self._catalog = catalog
        self._states = states
        self._clock = clock
        self._on_stable = on_stable

    async def write(self, markers: list[TxnMarker]) -> dict[TopicPartition, ErrorCode]:
        """Every marker into every partition it names, concurrently; each partition's error (NONE when
        durable and applied). A partition named by two markers answers with the first error, if any."""
        jobs: list[tuple[TopicPartition, asyncio.Future[ErrorCode]]] = []
        for marker in markers:
            for topic, partition in marker.partitions:
                jobs.append(((topic, partition),
                             asyncio.ensure_future(self._write_one(marker, topic, partition))))
        results: dict[TopicPartition, ErrorCode] = {}
        for key, job in jobs:
            error = await job
            if results.get(key, ErrorCode.none) == ErrorCode.none:
                results[key] = error
        return results

    async def _write_one(self, marker: TxnMarker, topic: str, partition: int) -> ErrorCode:
        log = self._catalog.log(topic, partition)
        if log is None:
            return self._catalog.missing_partition_error(topic, partition)
        timestamp = self._clock.wall_ms()
        batch = end_txn_marker_batch(marker.producer_id, marker.producer_epoch, marker.coordinator_epoch,
                                     marker.committed, timestamp)
        decided: list[CompletedTxn | None] = []
        async with self._states.lock(topic, partition):
            try:
                state = await self._states.state_for(log)
            except Exception as exc:
                _log.error("cannot load producer state for a marker", partition=f"{topic}-{partition}",
                           error=repr(exc))
                return ErrorCode.kafka_storage_error
            verdict, message = state.check_marker(marker.producer_id, marker.producer_epoch,
                                                  marker.coordinator_epoch)
            if verdict is MarkerVerdict.INVALID_PRODUCER_EPOCH:
                _log.info("marker refused", partition=f"{topic}-{partition}", reason=message)
                return ErrorCode.invalid_producer_epoch
            if verdict is MarkerVerdict.COORDINATOR_FENCED:
                _log.info("marker refused", partition=f"{topic}-{partition}", reason=message)
                return ErrorCode.transaction_coordinator_fenced

            def assigned(first: int, _last: int) -> None:
                # Under the log's append lock, before the marker is readable: the transaction is decided but
                # keeps holding the last stable offset until it is settled below.
                decided.append(state.complete_txn(marker.producer_id, marker.producer_epoch,
                                                  marker.coordinator_epoch, first, marker.committed, timestamp,
                                                  settled=False))

            append = asyncio.ensure_future(log.append(batch, on_assigned=assigned))
        try:
            await append
        except Exception as exc:
            _log.error("marker append failed", partition=f"{topic}-{partition}", error=repr(exc))
            return ErrorCode.kafka_storage_error
        completed = decided[0] if decided else None
        if completed is not None:
            try:
                if completed.is_aborted:
                    await log.add_aborted_txn(aborted_entry(state, completed))
            except Exception as exc:   # the marker is durable; replay after a restart re-indexes it
                _log.error("could not persist the transaction index entry", partition=f"{topic}-{partition}",
                           error=repr(exc))
            finally:
                state.settle_txn(completed.last_offset)
        self._on_stable((topic, partition))
        return ErrorCode.none


def describe(markers: list[TxnMarker]) -> list[dict[str, Any]]:
    """Markers as log fields."""
    return [{"producer_id": m.producer_id, "epoch": m.producer_epoch, "committed": m.committed,
             "partitions": [f"{t}-{p}" for t, p in m.partitions]} for m in markers]
