"""Every share partition this broker serves (Kafka's SharePartitionManager): loading each from the persister
on first use, acquiring records for ShareFetch from the data plane's logs, applying acknowledgements, the
acquisition-lock timers, and writing every change back through the persister before it is answered.

A share partition's start offset, when the group has none persisted yet, comes from the group's
``share.auto.offset.reset`` (latest by default, earliest, or ``by_duration:<ISO-8601 duration>``). At ``share.isolation.level=read_committed`` fetches stop
at the last stable offset and the batches of aborted transactions are archived, never delivered (the
transaction markers are acquired like records, as Kafka's are). A start offset resolved from the reset
policy is written with the partition's first change, not before (DescribeShareGroupOffsets shows -1 until).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable

import structlog

from groupcoord.coordinator.clock import Clock, SystemClock
from groupcoord.coordinator.first_use import made
from groupcoord.coordinator.share.persister import SharePersister
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import iter_batches
from groupcoord.storage.errors import CorruptLogError

if TYPE_CHECKING:
    from groupcoord.coordinator.share.sessions import ShareSessionCache
    from groupcoord.coordinator.share.share_partition import AckBatch, AcquiredRecords, SharePartition

# share_partition.py (a share partition's in-flight records: four dataclasses) is imported by the first share
# partition loaded, not at start-up: most brokers never serve a share group.

_log = structlog.get_logger("groupcoord.share")

Key = tuple[str, uuid.UUID, int]
_DURATION = r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$"  # compiled by its first use (re's cache), not at start-up


def parse_duration_ms(text: str) -> int | None:
    """ISO-8601 ``PnDTnHnMn.nS`` (what Java's Duration.parse takes for by_duration), None when malformed."""
    m = re.match(_DURATION, text.strip().upper())
    if m is None or not any(m.groups()):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
    return int(((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000)


def persister_error(code: ErrorCode) -> ErrorCode:
    """What a share partition that could not be loaded answers (Kafka's SharePartition.fetchPersisterError)."""
    if code in (ErrorCode.not_coordinator, ErrorCode.coordinator_not_available, ErrorCode.coordinator_load_in_progress):
        return ErrorCode.coordinator_not_available
    if code in (ErrorCode.group_id_not_found, ErrorCode.unknown_topic_or_partition):
        return code
    if code in (ErrorCode.fenced_leader_epoch, ErrorCode.fenced_state_epoch):
        return ErrorCode.not_leader_or_follower
    return ErrorCode.unknown_server_error


@dataclass
class FetchedPartition:
    """One share partition's part of a ShareFetch answer."""

    error: ErrorCode = ErrorCode.none
    records: bytes = b""
    acquired: list[AcquiredRecords] = field(default_factory=list)


class SharePartitionManager:
    def __init__(self, config: Any, persister: SharePersister, dataplane: Any, clock: Clock | None = None) -> None:
        self.config = config
        self.persister = persister
        self.dataplane = dataplane
        self.catalog = dataplane.topics
        self.clock = clock or SystemClock()
        self.partitions: dict[Key, SharePartition] = {}
        self._loads: dict[Key, asyncio.Future] = {}
        self._writes: dict[Key, asyncio.Lock] = {}
        self._timers: dict[Key, tuple[int, Any]] = {}
        self._retired = {"lock_expiries": 0, "redeliveries": 0, "archived_by_limit": 0}
        """Counts of share partitions dropped from the cache, so the totals never go back."""

    @cached_property
    def sessions(self) -> ShareSessionCache:
        """The share sessions, made (and their module imported) by the first ShareFetch or a share member's
        leaving: a broker that serves no share group needs none to start."""
        from groupcoord.coordinator.share.sessions import ShareSessionCache

        return ShareSessionCache(getattr(self.config, "group_share_max_share_sessions", 2000))

    # ------------------------------------------------------------------ settings (group config over broker)

    def _group_value(self, group_id: str, name: str) -> str | None:
        configs = getattr(getattr(self.dataplane, "dynamic_configs", None), "groups", {}) or {}
        return (configs.get(group_id) or {}).get(name)

    def _int_setting(self, group_id: str, name: str, broker_attr: str, default: int) -> int:
        value = self._group_value(group_id, name)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                pass
        return int(getattr(self.config, broker_attr, default))

    def lock_duration_ms(self, group_id: str) -> int:
        return self._int_setting(group_id, "share.record.lock.duration.ms", "group_share_record_lock_duration_ms", 30000)

    def delivery_limit(self, group_id: str) -> int:
        return self._int_setting(group_id, "share.delivery.count.limit", "group_share_delivery_count_limit", 5)

    def max_record_locks(self, group_id: str) -> int:
        return self._int_setting(group_id, "share.partition.max.record.locks",
                                 "group_share_partition_max_record_locks", 2000)

    def read_committed(self, group_id: str) -> bool:
        return (self._group_value(group_id, "share.isolation.level") or "read_uncommitted") == "read_committed"

    def auto_offset_reset(self, group_id: str) -> str:
        return self._group_value(group_id, "share.auto.offset.reset") or "latest"

    # ------------------------------------------------------------------ loading

    def _log_for(self, topic_id: uuid.UUID, partition: int) -> tuple[Any, ErrorCode | None]:
        topic = self.catalog.by_id(topic_id)
        if topic is None:
            return None, ErrorCode.unknown_topic_id
        log = self.catalog.log(topic.name, partition)
        if log is None:
            return None, ErrorCode.unknown_topic_or_partition
        return log, None

    async def get(self, group_id: str, topic_id: uuid.UUID, partition: int) -> SharePartition | ErrorCode:
        key = (group_id, topic_id, partition)
        sp = self.partitions.get(key)
        if sp is not None:
            return sp
        _log_, error = self._log_for(topic_id, partition)
        if error is not None:
            return error
        loading = self._loads.get(key)
        if loading is None:
            loading = self._loads[key] = asyncio.ensure_future(self._load(key))
            loading.add_done_callback(lambda _f: self._loads.pop(key, None))
        return await asyncio.shield(loading)

    async def _load(self, key: Key) -> SharePartition | ErrorCode:
        group_id, topic_id, partition = key
        log, error = self._log_for(topic_id, partition)
        if error is not None:
            return error
        state = await self.persister.read(group_id, topic_id, partition)
        if state.error != ErrorCode.none:
            return persister_error(state.error)
        start = state.start_offset
        if start < 0:  # resolved now, written with the first change (as Kafka's: DescribeShareGroupOffsets says -1 until then)
            start = await self._reset_offset(group_id, log)
        if start < log.log_start_offset:
            start = log.log_start_offset  # what retention or DeleteRecords removed is gone
        from groupcoord.coordinator.share.share_partition import SharePartition

        sp = SharePartition(group_id, topic_id, partition, start_offset=start, batches=state.batches,
                            state_epoch=state.state_epoch, lock_duration_ms=self.lock_duration_ms(group_id),
                            delivery_limit=self.delivery_limit(group_id),
                            max_record_locks=self.max_record_locks(group_id))
        if key in self.partitions:  # loaded meanwhile
            return self.partitions[key]
        self.partitions[key] = sp
        return sp

    async def _reset_offset(self, group_id: str, log: Any) -> int:
        strategy = self.auto_offset_reset(group_id)
        if strategy == "earliest":
            return log.log_start_offset
        if strategy.startswith("by_duration:"):
            duration = parse_duration_ms(strategy.split(":", 1)[1])
            if duration is not None:
                hit = await log.offset_for_timestamp(self.clock.wall_ms() - duration)
                if hit is not None:
                    return hit[0]
        return log.high_watermark

    # ------------------------------------------------------------------ fetching

    async def acquire(self, group_id: str, member_id: str, topic_id: uuid.UUID, partition: int, max_records: int,
                      max_bytes: int, record_limit: bool = False) -> FetchedPartition:
        sp = await self.get(group_id, topic_id, partition)
        if isinstance(sp, ErrorCode):
            return FetchedPartition(sp)
        log, error = self._log_for(topic_id, partition)
        if error is not None:
            return FetchedPartition(error)
        if max_records <= 0 or not sp.can_acquire():
            return FetchedPartition()
        committed = self.read_committed(group_id)
        try:
            limit = await self.dataplane.producer_states.last_stable_offset(log) if committed else log.high_watermark
            if sp.start_offset < log.log_start_offset:
                sp.start_offset = sp.end_offset = max(sp.end_offset, log.log_start_offset)
            offset = sp.next_fetch_offset()
            if offset >= limit:
                return FetchedPartition()
            data = await log.read(offset, max(1, max_bytes), min_one=True, max_offset=limit if committed else None)
        except CorruptLogError:
            return FetchedPartition(ErrorCode.kafka_storage_error)
        if not data:
            return FetchedPartition()
        data = bytes(data)
        headers = list(iter_batches(data, verify=False))
        aborted = []
        if committed and headers:
            upper = headers[-1][1].base_offset + headers[-1][1].last_offset_delta + 1
            aborted = log.collect_aborted_txns(offset, upper)
        from groupcoord.coordinator.share.share_partition import LogBatch

        batches = []
        for _pos, h in headers:
            last = h.base_offset + h.last_offset_delta
            # As Kafka's: the data of an aborted transaction is archived unseen; control batches (the markers)
            # are acquired like records (clients skip them and acknowledge their offsets as gaps).
            deliverable = h.is_control or not (
                h.is_transactional and any(t.producer_id == h.producer_id and t.first_offset <= h.base_offset <= t.last_offset
                                           for t in aborted))
            batches.append(LogBatch(h.base_offset, last, deliverable))
        acquired = sp.acquire(member_id, batches, max_records, self.clock.wall_ms(), record_limit=record_limit)
        # Records archived unseen here (an aborted transaction's) are written with the next change, as Kafka's.
        if not acquired:
            return FetchedPartition()
        self._schedule((group_id, topic_id, partition), sp)
        # Only the batches holding acquired records go back (the client delivers the acquired offsets only).
        lo, hi = acquired[0].first_offset, acquired[-1].last_offset
        parts = []
        for i, (pos, h) in enumerate(headers):
            end = headers[i + 1][0] if i + 1 < len(headers) else len(data)
            if h.base_offset + h.last_offset_delta >= lo and h.base_offset <= hi:
                parts.append(data[pos:end])
        return FetchedPartition(ErrorCode.none, b"".join(parts), acquired)

    # ------------------------------------------------------------------ acknowledging

    async def acknowledge(self, group_id: str, member_id: str, topic_id: uuid.UUID, partition: int,
                          batches: Iterable[AckBatch]) -> ErrorCode:
        key = (group_id, topic_id, partition)
        sp = self.partitions.get(key)
        if sp is None:
            loaded = await self.get(group_id, topic_id, partition)
            if isinstance(loaded, ErrorCode):
                return loaded
            sp = loaded
        error = sp.acknowledge(member_id, batches, self.clock.wall_ms())
        if error != ErrorCode.none:
            return error
        self._wake(key)
        self._schedule(key, sp)
        return await self._persist(key, sp)

    async def release_member(self, group_id: str, member_id: str,
                             partitions: Iterable[tuple[uuid.UUID, int]] | None = None) -> int:
        """What a leaving (or fenced, or disconnected) member holds becomes available again, and is written."""
        keys = [(group_id, t, p) for t, p in partitions] if partitions is not None else \
            [k for k in self.partitions if k[0] == group_id]
        released = 0
        for key in keys:
            sp = self.partitions.get(key)
            if sp is None:
                continue
            n = sp.release_member(member_id)
            if n:
                released += n
                self._wake(key)
                await self._persist(key, sp)
        return released

    def on_connection_closed(self, connection_id: int) -> None:
        """Kafka 4.1+: a share session ends with the connection it was opened on, and what its member held
        in the session's partitions is released (delivered again to others), without waiting for the locks."""
        sessions = made(self, "sessions")
        if sessions is None:
            return
        for session in sessions.on_connection_closed(connection_id):
            asyncio.ensure_future(self.release_member(session.group_id, session.member_id, list(session.partitions)))

    def forget(self, group_id: str, partitions: Iterable[tuple[uuid.UUID, int]] | None = None) -> None:
        """Drop cached share partitions (their state was deleted or altered): the next use reloads them."""
        keys = [(group_id, t, p) for t, p in partitions] if partitions is not None else \
            [k for k in self.partitions if k[0] == group_id]
        for key in keys:
            sp = self.partitions.pop(key, None)
            if sp is not None:
                for name in self._retired:
                    self._retired[name] += getattr(sp, name)
            timer = self._timers.pop(key, None)
            if timer is not None:
                timer[1].cancel()

    def stats(self) -> dict[str, int]:
        """What the metrics show: sessions, share partitions loaded, records acquired and available again,
        and the totals of lock expiries, redeliveries and records archived at the delivery limit."""
        parts = list(self.partitions.values())
        sessions = made(self, "sessions")
        out = {"sessions": 0 if sessions is None else len(sessions), "share_partitions": len(parts),
               "acquired": sum(sp.acquired_count() for sp in parts),
               "available": sum(sp.available_count() for sp in parts)}
        for name, retired in self._retired.items():
            out[name] = retired + sum(getattr(sp, name) for sp in parts)
        return out

    def active_groups(self) -> set[str]:
        return {k[0] for k in self.partitions}

    async def _persist(self, key: Key, sp: SharePartition) -> ErrorCode:
        lock = self._writes.setdefault(key, asyncio.Lock())
        async with lock:
            if not sp.has_write():
                return ErrorCode.none
            data = sp.take_write()
            error = await self.persister.write(key[0], key[1], key[2], data)
            if error != ErrorCode.none:
                _log.warning("share partition state not persisted", group=key[0], partition=key[2], error=error.name)
            return error

    # ------------------------------------------------------------------ lock timers

    def _schedule(self, key: Key, sp: SharePartition) -> None:
        deadline = sp.next_deadline()
        current = self._timers.get(key)
        if current is not None and deadline is not None and current[0] <= deadline:
            return
        if current is not None:
            current[1].cancel()
            del self._timers[key]
        if deadline is None:
            return
        handle = self.clock.call_later(deadline - self.clock.wall_ms(), lambda: self._on_timer(key))
        self._timers[key] = (deadline, handle)

    def _on_timer(self, key: Key) -> None:
        self._timers.pop(key, None)
        sp = self.partitions.get(key)
        if sp is None:
            return
        if sp.expire_locks(self.clock.wall_ms()):
            self._wake(key)
            asyncio.ensure_future(self._persist(key, sp))
        self._schedule(key, sp)

    def _wake(self, key: Key) -> None:
        """Records became available: parked ShareFetches of the partition look again."""
        topic = self.catalog.by_id(key[1])
        if topic is not None:
            self.dataplane.purgatory.notify((topic.name, key[2]))

    async def stop(self) -> None:
        for _deadline, handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        pending = [l for l in self._writes.values() if l.locked()]
        for lock in pending:
            async with lock:
                pass
