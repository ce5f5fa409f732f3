"""One shard of the coordinator, as the runtime and the service see it: the groups of one ``__consumer_offsets``
partition, sans I/O.

The front door of the group core: one method per API, each handing the shard's
state to the module that implements it (Kafka's GroupCoordinatorShard), plus the
shard's life cycle (load, replay, timers). Every operation takes ``now``
(milliseconds) and returns ``Effects``: records to append to this shard's
partition and replies to release once they are durable. Parked requests
(JoinGroup, SyncGroup) are answered later, in the ``Effects`` of whatever
operation or timer completes them. Nothing below imports this module.

The consumer and share groups' modules are imported by the methods that need them, on first use (a broker starts,
and most serve, without those groups: groups/service.py's docstring); the classic groups' and offsets' at once.
"""

from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import structlog

from groupcoord.coordinator.groups import admin, replay, retention
from groupcoord.coordinator.groups.classic import heartbeat, join, leave, rebalance, sync
from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.observer import ObserverAdapter
from groupcoord.coordinator.groups.offsets import commit, delete, fetch, transactional
from groupcoord.coordinator.groups.offsets.appliers import apply_offset_fields
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, new_offset_value, offset_key_fields, \
    offset_value_fields
from groupcoord.coordinator.groups.requests import Heartbeat, JoinGroup, OffsetCommit, SyncGroup
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.runtime.snapshot import pack_latest, pack_latest_24
from groupcoord.coordinator.groups.runtime.timers import CoordinatorTimer
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.memo import Memo

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.consumer.group import ConsumerGroup
    from groupcoord.coordinator.groups.share.group import ShareGroup
    from groupcoord.coordinator.groups.lazy_requests import (  # annotations only
        ConsumerGroupHeartbeat, LeaveGroup, OffsetDelete, OffsetFetch, ShareGroupHeartbeat, TxnOffsetCommit)


_RANDOM_CHUNK = 16 * 256
_random = bytearray()


def random_member_id(prefix: str) -> str:
    """Kafka's member id: the client id (or group.instance.id) and a random UUID (version 4, as
    ``uuid.uuid4()`` makes). The random bytes come from ``os.urandom`` 256 ids' worth at a time: one
    getrandom system call per member id was a tenth of a JoinGroup's cost. The UUID's text is written
    from the bytes directly, with the version and variant bits set as ``uuid.UUID(bytes=..., version=4)``
    sets them (the same string, checked in the tests), without the UUID object and its integer."""
    global _random
    if not _random:
        _random = bytearray(os.urandom(_RANDOM_CHUNK))
    raw = _random[-16:]
    del _random[-16:]
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{prefix}-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _forget_random() -> None:
    _random.clear()  # a forked child must not hand out the ids its parent still holds


os.register_at_fork(after_in_child=_forget_random)

_I32 = struct.Struct(">i")
REPLAY_TOPICS_CACHED = 10_000  # topics with a partition table during one load (_new_replay_topics)
REPLAY_PARTITIONS_CACHED = 100_000  # partitions in one topic's table
_VALUE_V3_NO_METADATA = struct.Struct(">hqihq")  # version 3, offset, leader epoch, metadata length 0, commit time


class GroupShard:
    def __init__(
        self,
        partition: int,
        config: Any,
        *,
        topics: Any = None,
        observer: object | None = None,
        member_id_factory: Callable[[str], str] = random_member_id,
    ) -> None:
        self.state = ShardState(
            partition=partition,
            config=config,
            topics=topics,
            observer=ObserverAdapter(observer),
            log=structlog.get_logger("groupcoord.groups").bind(shard=partition),
            new_member_id=member_id_factory,
        )
        self._replay_names: dict[bytes, tuple[str, str, Memo]] = {}  # replay_raw's names, for one load
        self._replay_topics = self._new_replay_topics()  # the partition tables of those names' topics
        self.next_deadline: Callable[[], int | None] = self.state.timer.next_deadline
        """The earliest timer deadline, None when nothing is scheduled: the timer's own method, bound here (and
        again when ``begin_load`` makes a new timer), because the runtime asks after every operation and a
        method of the shard's would only add a frame."""

    # ------------------------------------------------------------------ what the runtime and operators read

    @property
    def partition(self) -> int:
        return self.state.partition

    @property
    def config(self) -> Any:
        return self.state.config

    @config.setter
    def config(self, config: Any) -> None:
        """An operator's configuration change applies from the next request on."""
        self.state.config = config

    @property
    def log(self) -> Any:
        return self.state.log

    @property
    def loading(self) -> bool:
        return self.state.loading

    @property
    def unavailable(self) -> str | None:
        return self.state.unavailable

    @unavailable.setter
    def unavailable(self, reason: str | None) -> None:
        self.state.unavailable = reason

    @property
    def groups(self) -> dict[str, ClassicGroup]:
        return self.state.groups

    @property
    def consumer_groups(self) -> dict[str, ConsumerGroup]:
        return self.state.consumer_groups

    @property
    def share_groups(self) -> dict[str, ShareGroup]:
        return self.state.share_groups

    def group_count(self) -> int:
        return len(self.state.groups) + len(self.state.consumer_groups) + len(self.state.share_groups)

    # ------------------------------------------------------------------ APIs

    def handle_join(self, req: JoinGroup, token: Any, now: int) -> Effects:
        return join.handle_join(self.state, req, token, now)

    def handle_sync(self, req: SyncGroup, token: Any, now: int) -> Effects:
        return sync.handle_sync(self.state, req, token, now)

    def handle_heartbeat(self, req: Heartbeat, token: Any, now: int) -> Effects:
        return heartbeat.handle_heartbeat(self.state, req, token, now)

    def handle_leave(self, req: LeaveGroup, token: Any, now: int) -> Effects:
        return leave.handle_leave(self.state, req, token, now)

    def handle_offset_commit(self, req: OffsetCommit, token: Any, now: int) -> Effects:
        return commit.handle_offset_commit(self.state, req, token, now)

    def handle_txn_offset_commit(self, req: TxnOffsetCommit, token: Any, now: int) -> Effects:
        return transactional.handle_txn_offset_commit(self.state, req, token, now)

    def complete_transaction(self, producer_id: int, producer_epoch: int, coordinator_epoch: int, committed: bool,
                             token: Any, now: int) -> Effects:
        return transactional.complete_transaction(self.state, producer_id, producer_epoch, coordinator_epoch,
                                                  committed, token, now)

    def handle_offset_delete(self, req: OffsetDelete, token: Any, now: int) -> Effects:
        return delete.handle_offset_delete(self.state, req, token, now)

    def handle_delete_group(self, group_id: str, token: Any, now: int) -> Effects:
        return admin.handle_delete_group(self.state, group_id, token, now)

    def handle_consumer_group_heartbeat(self, req: ConsumerGroupHeartbeat, token: Any, now: int) -> Effects:
        from groupcoord.coordinator.groups.consumer.heartbeat import handle

        return handle(self.state, req, token, now)

    def describe_consumer_group(self, group_id: str, include_authorized_operations: bool = False) -> dict:
        from groupcoord.coordinator.groups.consumer.describe import describe

        return describe(self.state, group_id, include_authorized_operations)

    def handle_share_group_heartbeat(self, req: ShareGroupHeartbeat, token: Any, now: int) -> Effects:
        from groupcoord.coordinator.groups.share.heartbeat import handle

        return handle(self.state, req, token, now)

    def describe_share_group(self, group_id: str, include_authorized_operations: bool = False) -> dict:
        from groupcoord.coordinator.groups.share.describe import describe

        return describe(self.state, group_id, include_authorized_operations)

    def share_partitions_initialized(self, group_id: str, done: dict, token: Any, now: int) -> Effects:
        from groupcoord.coordinator.groups.share.initialization import initialized

        return initialized(self.state, group_id, done, token, now)

    def share_partitions_uninitialized(self, group_id: str, failed: dict, token: Any, now: int) -> Effects:
        from groupcoord.coordinator.groups.share.initialization import uninitialized

        return uninitialized(self.state, group_id, failed, token, now)

    def share_topics_deleting(self, group_id: str, topics: dict, token: Any, now: int) -> Effects:
        from groupcoord.coordinator.groups.share.initialization import mark_deleting

        return mark_deleting(self.state, group_id, topics, token, now)

    def share_topics_deleted(self, group_id: str, topic_ids: set, token: Any, now: int) -> Effects:
        from groupcoord.coordinator.groups.share.initialization import forget_deleting

        return forget_deleting(self.state, group_id, topic_ids, token, now)

    def prepare_share_group_deletion(self, group_id: str, token: Any, now: int) -> Effects:
        """Kafka's sharePartitionDeleteRequests for one id: replies {"error_code", "partitions"}, with
        error None when the id is not a share group (the deletion goes on as for any other group)."""
        fx = Effects()
        group = self.state.share_groups.get(group_id)
        if self.state.availability_error() is not None or group is None:
            fx.reply(token, {"error_code": None, "partitions": {}})
            return fx
        from groupcoord.coordinator.groups.share.deletion import prepare

        error, partitions = prepare(self.state, group, fx, now)
        fx.reply(token, {"error_code": error, "partitions": partitions})
        return fx

    def fetch_offsets(self, req: OffsetFetch) -> dict:
        return fetch.fetch_offsets(self.state, req)

    def describe_group(self, group_id: str, *, include_authorized_operations: bool = False, version: int = 5) -> dict:
        return admin.describe_group(self.state, group_id, include_authorized_operations=include_authorized_operations, version=version)

    def list_groups(self, states_filter: tuple[str, ...] = (), types_filter: tuple[str, ...] = ()) -> tuple[ErrorCode, list[dict]]:
        return admin.list_groups(self.state, states_filter, types_filter)

    # ------------------------------------------------------------------ time

    def tick(self, now: int) -> Effects:
        """Run every timer operation due at ``now``: delayed joins, session expiries, pending syncs, the retention pass."""
        fx = Effects()
        at_once = True
        for operation in self.state.timer.pop_due(now):
            done = operation(self.state, now)
            at_once = at_once and done.at_once
            fx.extend(done)
        fx.at_once = at_once  # (only when every operation's replies may be given at once: see Effects.at_once)
        return fx

    def after_write(self, operation: Callable[[ShardState, int, ErrorCode | None], Effects], now: int,
                    error: ErrorCode | None = None) -> Effects:
        """An operation an Effects asked to run once its writes were durable, or timed out (``Effects.after_write``)."""
        return operation(self.state, now, error)

    # ------------------------------------------------------------------ loading

    def begin_load(self) -> None:
        """Forget everything and answer COORDINATOR_LOAD_IN_PROGRESS until ``finish_load``."""
        state = self.state
        state.loading = True
        state.unavailable = None
        self._replay_names = {}
        self._replay_topics = self._new_replay_topics()
        state.groups.clear()
        state.consumer_groups.clear()
        state.share_groups.clear()
        state.pending_txn_offsets.clear()
        state.pending_by_partition.clear()
        state.offset_order.clear()
        state.next_offset_order = 0
        state.timer = CoordinatorTimer()
        self.next_deadline = state.timer.next_deadline

    def replay(self, key: Any, value: Any, now: int, producer_id: int = -1) -> None:
        if producer_id >= 0 and isinstance(key, OffsetCommitKey):
            transactional.apply_pending_offset(self.state, producer_id, key, value, now)
            return
        replay.apply_record(self.state, key, value, now)

    def replay_raw(self, key: bytes, value: bytes | None, now: int) -> bool:
        """A plain (non-transactional) record applied straight from its bytes, if it is an offset commit:
        most of any offsets log, and a replay of a million of them went through six calls and a key object
        each. The same applier as ``replay`` (``apply_offset_fields``); False: anything else (a tombstone,
        another record type, unexpected bytes), which the caller then decodes and passes to ``replay``."""
        if value is None or len(key) < 4 or key[0] or key[1] > 1:
            return False
        # The commits of one request share their group and topic: the names are looked up by the key's bytes
        # before the partition (decoded once per group and topic; the table lives for this load only).
        names = self._replay_names.get(key[:-4])
        if names is None:
            key_fields = offset_key_fields(key)
            if key_fields is None:
                return False
            group_id, topic, partition = key_fields
            glen = (key[2] << 8) | key[3]
            if len(key) == 10 + glen + ((key[4 + glen] << 8) | key[5 + glen]):  # no bytes past the partition
                self._replay_names[key[:-4]] = (group_id, topic, self._replay_topics[topic])
        else:
            group_id, topic, _ = names
            partition = _I32.unpack_from(key, len(key) - 4)[0]
        value_fields = offset_value_fields(value)
        if value_fields is None:
            return False
        apply_offset_fields(self.state, group_id, topic, partition, new_offset_value(*value_fields), now)
        return True

    def _new_replay_topics(self) -> Memo:
        """For one load, a table per topic from a key's last 4 bytes (its partition, big-endian) to the shared
        ``(topic, partition)`` tuple (``ShardState.topic_partition``, which stays the one place that shares them):
        a replayed commit then finds its partition with one dictionary look-up of bytes it already holds, instead
        of an unpack, a tuple and its hash. Each ``replay_raw`` name entry holds its topic's table, so every group
        committing to a topic shares it. Bounded (``Memo``): in topics, and in partitions per topic."""
        state = self.state

        def partitions_of(topic: str) -> Memo:
            return Memo(lambda raw: state.topic_partition(topic, _I32.unpack(raw)[0]), REPLAY_PARTITIONS_CACHED, 4)

        return Memo(partitions_of, REPLAY_TOPICS_CACHED)

    def replay_plain_batch(self, records: Iterable[tuple[int, bytes | None, bytes | None]], start: int, now: int,
                           latest: dict[bytes, bytes], decode_record: Callable[[bytes, bytes | None], tuple[Any, Any]]) -> int:
        """The records of one plain (non-transactional) batch, as (offset, key, value) from
        ``decode_key_values`` (read once): those from ``start`` on with a key are applied and kept in ``latest`` (the
        runtime's ``LatestRecords.records``, as ``pack_latest`` makes them, in log order); how many.

        What the runtime's loop did with ``replay_raw``, ``apply_offset_fields`` and ``pack_latest`` for
        each record, fused into one loop: a replay of a million offset commits made five Python calls per
        record for them (3.24 s of CPU for bench/replay_bench.py before). The common record, an offset
        commit value v3 without metadata (24 bytes, what this broker and Kafka write), is read with one
        unpack; any other record takes ``replay_raw``, else ``decode_record`` and ``replay``, as before."""
        state = self.state
        names_of = self._replay_names
        consumer_groups, groups = state.consumer_groups, state.groups
        pending = state.pending_by_partition
        value_v3 = _VALUE_V3_NO_METADATA.unpack
        pack_v3 = pack_latest_24
        new_value = new_offset_value
        count = 0
        for offset, key, value in records:
            if key is None or offset < start:
                continue
            count += 1
            # A key whose bytes before the partition are a prefix ``replay_raw`` checked and named is an offset
            # commit key (v0/v1) of that group and topic, exactly that long (see there): no byte of it needs
            # checking again. A 24-byte value is one unpack; its version and metadata length decide.
            names = names_of.get(key[:-4])
            if names is not None and value is not None and len(value) == 24:
                version, commit_offset, epoch, mlen, commit_ts = value_v3(value)
                if version == 3 and mlen == 0:
                    group_id, topic, partitions = names
                    tp = partitions[key[-4:]]  # the shared (topic, partition): see _new_replay_topics
                    # apply_offset_fields, inline; most shards hold no consumer group (the look-up is skipped)
                    group = (consumer_groups and consumer_groups.get(group_id)) or groups.get(group_id)
                    if group is None:
                        group = state.create_group(group_id, now)
                    group.offsets[tp] = new_value(commit_offset, epoch, "", commit_ts, None)
                    if pending and (group_id, topic, tp[1]) in pending:
                        state.offset_order[(group_id, topic, tp[1])] = state.take_offset_order()
                    if key in latest:
                        del latest[key]  # re-inserted at the end: the dict stays in log order
                    latest[key] = pack_v3(offset, 1, value)  # pack_latest(offset, value)
                    continue
            if not self.replay_raw(key, value, now):
                self.replay(*decode_record(key, value), now, -1)
                # whatever that record did to the state, the loop reads it afresh
                state = self.state
                names_of = self._replay_names
                consumer_groups, groups = state.consumer_groups, state.groups
                pending = state.pending_by_partition
            if key in latest:
                del latest[key]
            latest[key] = pack_latest(offset, value)
        return count

    def replay_end_transaction(self, producer_id: int, committed: bool, now: int) -> None:
        transactional.apply_end_marker(self.state, producer_id, committed, now)

    def finish_load(self, now: int) -> None:
        """Loaded members get a full session from now to heartbeat; the retention pass is scheduled."""
        rebalance.schedule_loaded(self.state, now)
        if self.state.consumer_groups:  # (their modules: with the first such group)
            from groupcoord.coordinator.groups.consumer.fencing import schedule_loaded

            schedule_loaded(self.state, now)
        if self.state.share_groups:
            from groupcoord.coordinator.groups.share.fencing import schedule_loaded as schedule_share_loaded

            schedule_share_loaded(self.state, now)
        retention.schedule(self.state, now)
        self.state.loading = False
        self._replay_names = {}
        self._replay_topics = self._new_replay_topics()

    # ------------------------------------------------------------------ read-only views

    def iter_groups(self) -> Iterator[ClassicGroup]:
        return iter(list(self.state.groups.values()))

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        group = self.state.consumer_groups.get(group_id) or self.state.groups.get(group_id)
        if group is None:
            return {}
        return {tp: value.offset for tp, value in sorted(tuple(group.offsets.items()))}
