"""Every partition's producer table (``PartitionProducerState``), loaded on first use, and the last stable
offset each one gives readers.

A table is rebuilt from the snapshot written at the last clean stop, then the batch headers appended after
it (or the whole log when there is none). The replay also applies end-transaction markers and re-enters
aborted transactions into the ``.txnindex`` of their marker's segment (a crash may have left the marker on
disk without its index entry; an entry already there is left as it is), so the transaction index and the
open transactions survive a crash as Kafka's LogLoader rebuilds them.

Producers idle for ``expiration_ms`` are dropped from the snapshot as it loads and from every loaded
table by ``remove_expired`` (run periodically by the data plane), as Kafka's ProducerStateManager
does; producers replayed from the log are left to the next periodic pass, as in Kafka.

The table's modules (producer_state, producer_snapshot, the control-record reader) are imported by the first table
loaded or snapshot written, not with this one: an empty broker needs none of them to start (~1.5 % of the daemon's
start-up), and the first Produce's handler imports them anyway (the daemon's warm-up does that after listening).
"""
from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable

from groupcoord.storage.fifo_lock import FifoLock
from groupcoord.storage.txn_index import AbortedTxn

from groupcoord.coordinator.clock import Clock

if TYPE_CHECKING:
    from groupcoord.coordinator.dataplane.producer_state import CompletedTxn, PartitionProducerState


class ProducerStates:
    def __init__(self, clock: Clock, expiration_ms: int) -> None:
        self._clock = clock
        self._expiration_ms = expiration_ms
        self._states: dict[tuple[str, int], PartitionProducerState] = {}
        self._loading: dict[tuple[str, int], asyncio.Future[PartitionProducerState]] = {}
        self._locks: dict[tuple[str, int], FifoLock] = defaultdict(FifoLock)
        """Per partition: held over a batch's sequence check and the queuing of its write (FifoLock: a free one
        is taken without a coroutine)."""
        self.pending: dict[tuple[str, int, int, int], asyncio.Future] = {}
        """Appends admitted but not yet durable, by (topic, partition, producer id, first sequence)."""

    def lock(self, topic: str, partition: int) -> FifoLock:
        return self._locks[(topic, partition)]

    def loaded(self, topic: str, partition: int) -> PartitionProducerState | None:
        return self._states.get((topic, partition))

    def loaded_items(self) -> list[tuple[tuple[str, int], PartitionProducerState]]:
        return list(self._states.items())

    async def state_for(self, log: Any) -> PartitionProducerState:
        key = (log.topic, log.partition)
        state = self._states.get(key)
        if state is not None:
            return state
        loading = self._loading.get(key)
        if loading is None:
            loading = self._loading[key] = asyncio.ensure_future(self._load(log))
            loading.add_done_callback(lambda _f: self._loading.pop(key, None))
        return await asyncio.shield(loading)

    async def last_stable_offset(self, log: Any) -> int:
        """The partition's LSO (loading its producer table if needed)."""
        state = await self.state_for(log)
        return state.last_stable_offset(log.high_watermark)

    def stable_end(self, log: Any) -> int:
        """The LSO if the table is loaded, else the high watermark (what a parked read_committed fetch
        compares to notice progress; the fetch itself loads the table before reading)."""
        state = self._states.get((log.topic, log.partition))
        return log.high_watermark if state is None else state.last_stable_offset(log.high_watermark)

    async def _load(self, log: Any) -> PartitionProducerState:
        from groupcoord.coordinator.dataplane.producer_snapshot import read_snapshot
        from groupcoord.coordinator.dataplane.producer_state import PartitionProducerState
        from groupcoord.protocol.control_records import read_end_txn_marker

        key = (log.topic, log.partition)
        state, replay_from = PartitionProducerState(), log.log_start_offset
        snapshot = read_snapshot(log.directory)
        if snapshot is not None and log.log_start_offset <= snapshot.end_offset <= log.log_end_offset:
            state, replay_from = snapshot.state, snapshot.end_offset
            state.remove_expired(self._clock.wall_ms(), self._expiration_ms)
        async for header, data in log.batches(replay_from):
            if header.producer_id < 0 or header.base_offset < replay_from:
                continue
            if header.is_control:
                marker = read_end_txn_marker(data, 0, header) if header.is_transactional else None
                if marker is None:
                    continue
                completed = state.complete_txn(header.producer_id, header.producer_epoch, marker.coordinator_epoch,
                                               header.base_offset, marker.committed, header.max_timestamp)
                if completed is not None and completed.is_aborted:
                    await log.add_aborted_txn(aborted_entry(state, completed))
                continue
            state.record(header.producer_id, header.producer_epoch, header.base_sequence,
                         header.records_count, header.base_offset, header.last_offset,
                         header.max_timestamp, header.is_transactional)
        self._states[key] = state
        return state

    def remove_expired(self) -> int:
        """Forget, in every loaded partition, the producers idle for the expiration; how many were."""
        now = self._clock.wall_ms()
        return sum(len(state.remove_expired(now, self._expiration_ms)) for state in self._states.values())

    def write_snapshots(self, log_for: Callable[[str, int], Any]) -> None:
        """Persist every partition's table (at a clean stop) so the next start need not replay the logs."""
        if not self._states:
            return
        from groupcoord.coordinator.dataplane.producer_snapshot import write_snapshot

        for (topic, partition), state in self._states.items():
            log = log_for(topic, partition)
            if log is not None:
                write_snapshot(log.directory, log.log_end_offset, state)

    def drop_topic(self, topic: str) -> None:
        for key in [k for k in self._states if k[0] == topic]:
            del self._states[key]
        for key in [k for k in self._locks if k[0] == topic and not self._locks[k].locked()]:
            del self._locks[key]


def aborted_entry(state: PartitionProducerState, completed: CompletedTxn) -> AbortedTxn:
    """The ``.txnindex`` entry of an aborted transaction, with the LSO once it is decided."""
    return AbortedTxn(completed.producer_id, completed.first_offset, completed.last_offset,
                      state.lso_after(completed))
