"""The group coordinator as the broker calls it (Kafka's GroupCoordinatorService): one method per group API.

Each request is routed to the shard that owns its group (Kafka's partition of
``__consumer_offsets``) and run there by the runtime, which answers once the
records it wrote are durable. Every method also says how to answer with an
error instead, for when the shard cannot take the request or its write fails.

The KIP-848 consumer and KIP-932 share groups' code (their models, records' appliers, heartbeats, describes) is
imported by the first such group, record or request (the methods and branches that need it import it), not with
the group coordinator: a broker starts, and most brokers serve, without either (~4 % of the daemon's start-up).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterator

import structlog

from groupcoord.coordinator.clock import Clock, SystemClock
from groupcoord.coordinator.groups.admin import described_error
from groupcoord.coordinator.groups.classic.heartbeat import beat_stable
from groupcoord.coordinator.groups.classic.responses import join_error, sync_error
from groupcoord.coordinator.groups import offsets_records
from groupcoord.coordinator.groups.hashing import partition_for, partitions as partition_table
from groupcoord.coordinator.groups.observer import ObserverAdapter
from groupcoord.coordinator.groups.offsets.commit import commit_lane
from groupcoord.coordinator.groups.offsets.fetch import partition_answer
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey
from groupcoord.coordinator.groups.requests import Heartbeat, JoinGroup, OffsetCommit, SyncGroup
from groupcoord.coordinator.groups.runtime.coordinator_runtime import CoordinatorRuntime
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard import GroupShard, random_member_id
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC
from groupcoord.storage.config import CleanupPolicy, LogConfig

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.lazy_requests import (  # annotations only
        ConsumerGroupHeartbeat, LeaveGroup, OffsetDelete, OffsetFetch, ShareGroupHeartbeat, TxnOffsetCommit)
    from groupcoord.coordinator.groups.share.state_metadata import ShareStatePartitions
    from groupcoord.coordinator.groups.views import GroupView

ErrorShape = Callable[[ErrorCode], dict]


def _heartbeat_error(e: ErrorCode) -> dict:
    return {"throttle_time": 0, "error_code": e}


def _join_error_of(req: JoinGroup, e: ErrorCode) -> dict:
    """A parked JoinGroup's answer when its shard stops or reloads first."""
    return join_error(req.member_id, e)


def _sync_error_of(_req: SyncGroup, e: ErrorCode) -> dict:
    """A parked SyncGroup's answer when its shard stops or reloads first."""
    return sync_error(e)


class GroupCoordinatorService:
    def __init__(
        self,
        config: Any,
        log_manager: Any,
        topics: Any,
        clock: Clock | None = None,
        observer: object | None = None,
        *,
        member_id_factory: Callable[[str], str] = random_member_id,
        topic_defaults: LogConfig | None = None,
    ) -> None:
        self.config = config
        self.topic_defaults = topic_defaults or LogConfig()
        self.topics = topics
        self.num_partitions = config.offsets_topic_num_partitions
        self._partition_of = partition_table(self.num_partitions)
        """``[group_id]``: its partition — the shared routing table itself, so that a remembered group's look-up is
        the dictionary's, no call (every JoinGroup, SyncGroup and Heartbeat routes by it)."""
        shards = [
            GroupShard(p, config, topics=topics, observer=observer, member_id_factory=member_id_factory)
            for p in range(self.num_partitions)
        ]
        self._shards = shards
        self._runtime = CoordinatorRuntime(shards, config, log_manager, self.log_config, clock or SystemClock(),
                                           ObserverAdapter(observer), topic=OFFSETS_TOPIC, codec=offsets_records,
                                           compression=getattr(config, "offsets_topic_compression_codec", 0),
                                           write_timeout_ms=getattr(config, "offsets_commit_timeout_ms", 5000))
        # The share coordinator's persister (SHARE_CONTRACT.md: initialize/delete), set by the broker when
        # share-partition state is served; None: there is no state to initialise or delete, so subscribed
        # partitions count as initialised at once.
        self.share_persister: Any = None
        self._share_member_listener: Callable[[str, str], None] | None = None
        # Told a share group's id once DeleteGroups removed it (the share partitions drop what they cached).
        self.share_group_deleted_listener: Callable[[str], None] | None = None
        self._background: set[asyncio.Task] = set()
        self._log = structlog.get_logger("groupcoord.groups.share")

    @property
    def share_member_listener(self) -> Callable[[str, str], None] | None:
        """Told (group id, member id) when a share member leaves or is fenced (the share partitions release
        what it acquired)."""
        return self._share_member_listener

    @share_member_listener.setter
    def share_member_listener(self, listener: Callable[[str, str], None] | None) -> None:
        self._share_member_listener = listener
        for shard in self._shards:
            shard.state.share_member_listener = listener

    def use_group_configs(self, source: Any) -> None:
        """Per-group configs (``consumer.session.timeout.ms`` …, set with IncrementalAlterConfigs on GROUP
        resources) take effect for their group: ``source`` answers the effective values per group id."""
        for shard in self._shards:
            shard.state.group_configs = source

    def filter_regex_topics(self, visible: Callable[[str, set[str]], set[str]] | None) -> None:
        """With ACLs on, a consumer group member's regex subscription resolves only to the topics ``visible``
        keeps for that member (the authorizer's DESCRIBE check for the member's principal)."""
        for shard in self._shards:
            shard.state.regex_topic_filter = visible

    # ------------------------------------------------------------------ lifecycle

    @property
    def log_config(self) -> LogConfig:
        """As Kafka creates __consumer_offsets: compacted, with its own segment size; everything else (tombstone
        retention, dirty ratio, compaction lags) is the broker's topic default."""
        return LogConfig.from_topic_configs(
            {"cleanup.policy": CleanupPolicy.COMPACT.value, "segment.bytes": str(self.config.offsets_topic_segment_bytes)},
            base=self.topic_defaults,
        )

    async def start(self) -> None:
        """Open and replay every shard's partition; each shard serves as soon as it is loaded."""
        await self._runtime.start()

    async def stop(self) -> None:
        for task in list(self._background):  # share-partition initialisations still in flight: a later heartbeat retries
            task.cancel()
        await self._runtime.stop()

    def shards(self) -> list:
        return self._runtime.shards()

    def last_load(self, partition: int) -> tuple[int, int]:
        """(records taken from the snapshot, records replayed from the log) when the partition last loaded."""
        return self._runtime.last_load(partition)

    # ------------------------------------------------------------------ routing

    def shard_for(self, group_id: str) -> GroupShard:
        return self._runtime.shard(self._partition_of[group_id])

    def _run(self, group_id: str, op: Callable[[GroupShard, Any, int], Effects], on_error: ErrorShape,
             reply: Any = None) -> asyncio.Future[dict]:
        return self._runtime.run(self._partition_of[group_id], op, on_error, reply)

    # ------------------------------------------------------------------ APIs

    def join_group(self, req: JoinGroup, reply: Any = None) -> asyncio.Future[dict]:
        """``reply``: answered instead of a new future (the server's JoinGroup lane hands its ``OwedAnswer``)."""
        return self._runtime.run_request(self._partition_of[req.group_id], GroupShard.handle_join,
                                         req, _join_error_of, reply)

    def sync_group(self, req: SyncGroup, reply: Any = None) -> asyncio.Future[dict]:
        """``reply``: as for `join_group` (the SyncGroup lane's)."""
        return self._runtime.run_request(self._partition_of[req.group_id], GroupShard.handle_sync,
                                         req, _sync_error_of, reply)

    def join_lane(self) -> Callable[[JoinGroup, Any], Any]:
        """``join(req, reply)`` for the server's JoinGroup lane: `join_group`, its reply given to ``reply``."""
        return self.join_group

    def sync_lane(self) -> Callable[[SyncGroup, Any], Any]:
        """``sync(req, reply)`` for the server's SyncGroup lane: `sync_group`, its reply given to ``reply``."""
        return self.sync_group

    def heartbeat(self, req: Heartbeat) -> asyncio.Future[dict]:
        return self._run(req.group_id, lambda s, t, now: s.handle_heartbeat(req, t, now), _heartbeat_error)

    def heartbeat_inline(self, req: Heartbeat) -> dict | asyncio.Future[dict]:
        """The same as `heartbeat`, but the answer itself when it is known at once (nearly always): what
        the wire handler calls, so that a heartbeat costs no future."""
        return self._runtime.run_inline(self._partition_of[req.group_id],
                                        lambda s, t, now: s.handle_heartbeat(req, t, now), _heartbeat_error)

    def heartbeat_lane(self) -> tuple[Callable[[str, int, str, int], bool], Callable[[], int]]:
        """``(beat, wall_ms)`` for the server's frame loop. ``beat(group_id, generation, member_id, now) -> bool``: True when the
        heartbeat of a dynamic member was the common success (a member of a Stable group at its generation,
        its shard loaded with no write waiting to be made durable), its session extended from ``now`` (the
        wall clock in ms, read once per read of the socket: the frames of one read arrived together) and
        NONE the answer; False when nothing was done and the request must go through `heartbeat_inline`,
        which judges every other case. A few look-ups, no request object, no Effects. ``wall_ms``: the clock
        ``now`` is read from (the shards' own)."""
        partitions = partition_table(self.num_partitions)
        states = [shard.state for shard in self._shards]
        quiet = self._runtime.quiet

        def beat(group_id: str, generation: int, member_id: str, now: int) -> bool:
            partition = partitions[group_id]
            return quiet(partition) and beat_stable(states[partition], group_id, generation, member_id, now)

        return beat, self._runtime.clock.wall_ms

    def commit_lane(self) -> Callable[..., bool]:
        """``commit(group_id, generation, member_id, instance, version, topics, reply, response) -> bool`` for
        the server's frame loop: True when the commit was one every partition of which the shard accepts
        (``offsets.commit.commit_lane``), its records applied and queued with ``(reply, response)`` like any
        operation's (answered once durable); False when nothing was done and the request must go the ordinary
        way, which judges every other case."""
        return commit_lane([shard.state for shard in self._shards],
                           partition_table(self.num_partitions),  # the dictionary itself: a hit costs no call
                           self._runtime.queue_lane_write, self._runtime.clock)

    def leave_group(self, req: LeaveGroup) -> asyncio.Future[dict]:
        return self._run(
            req.group_id, lambda s, t, now: s.handle_leave(req, t, now), lambda e: {"throttle_time": 0, "error_code": e, "members": []}
        )

    def consumer_group_heartbeat(self, req: ConsumerGroupHeartbeat) -> asyncio.Future[dict]:
        from groupcoord.coordinator.groups.consumer.heartbeat import error_response  # see the module's docstring

        return self._run(req.group_id, lambda s, t, now: s.handle_consumer_group_heartbeat(req, t, now),
                         lambda e: error_response(e, None))

    async def describe_consumer_groups(self, group_ids: list[str], include_authorized_operations: bool = False) -> list[dict]:
        """Each group as of its shard's last durable write (answered behind that shard's pending appends)."""
        from groupcoord.coordinator.groups.consumer import describe as consumer_describe

        async def one(group_id: str) -> dict:
            def op(shard: GroupShard, token: Any, now: int) -> Effects:
                fx = Effects()
                fx.reply(token, shard.describe_consumer_group(group_id, include_authorized_operations))
                return fx

            return await self._run(group_id, op, lambda e: {**consumer_describe.error_row(group_id, e, None)})

        return list(await asyncio.gather(*(one(g) for g in group_ids)))

    # ------------------------------------------------------------------ share groups (KIP-932)

    def share_group_heartbeat(self, req: ShareGroupHeartbeat) -> asyncio.Future[dict]:
        """The answer once the heartbeat's records are durable; partitions it found without share-partition
        state are initialised after that, off the heartbeat's path (Kafka adds the persister call to a timer)."""
        from groupcoord.coordinator.groups.share import heartbeat as share_heartbeat

        inner = self._run(req.group_id, lambda s, t, now: s.handle_share_group_heartbeat(req, t, now),
                          lambda e: share_heartbeat.error_response(e, None))
        outer = asyncio.get_running_loop().create_future()

        def done(f: asyncio.Future) -> None:
            if outer.done():
                return
            if f.cancelled() or f.exception() is not None:
                outer.set_result(share_heartbeat.error_response(ErrorCode.unknown_server_error, None))
                return
            response = dict(f.result())
            init = response.pop(share_heartbeat.INITIALIZE, None)
            if init is not None:
                self._spawn(self._initialize_share_partitions(req.group_id, *init))
            outer.set_result(response)

        if inner.done():
            done(inner)
        else:
            inner.add_done_callback(done)
        return outer

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _initialize_share_partitions(self, group_id: str, group_epoch: int,
                                           changes: dict[uuid.UUID, tuple[str, frozenset[int]]]) -> None:
        """Kafka's persisterInitialize: the share coordinator creates each partition's state (start offset -1:
        share.auto.offset.reset decides), then the group records them initialised; on any failure they leave
        "initializing" and a later heartbeat asks again."""
        wanted = {t: frozenset(ps) for t, (_, ps) in changes.items()}
        failed: dict[uuid.UUID, frozenset[int]] = {}
        persister = self.share_persister
        if persister is not None:
            pairs = [(t, p) for t, ps in sorted(wanted.items(), key=lambda kv: str(kv[0])) for p in sorted(ps)]
            try:
                errors = await persister.initialize(group_id, pairs, start_offset=-1, state_epoch=group_epoch)
                bad = {tp for tp, e in (errors or {}).items() if int(e) != 0}
            except Exception as exc:  # the persister's failure must not be the heartbeat's
                self._log.error("share-partition state initialisation failed", group_id=group_id, error=repr(exc))
                bad = set(pairs)
            if bad:
                failed = wanted
                self._log.error("share-partition state initialisation refused", group_id=group_id,
                                partitions=len(bad))
        try:
            if failed:
                await self._run(group_id, lambda s, t, now: s.share_partitions_uninitialized(group_id, failed, t, now),
                                lambda e: {"error_code": e})
            else:
                await self._run(group_id, lambda s, t, now: s.share_partitions_initialized(group_id, wanted, t, now),
                                lambda e: {"error_code": e})
        except Exception as exc:
            self._log.error("share-partition state metadata not written", group_id=group_id, error=repr(exc))

    async def describe_share_groups(self, group_ids: list[str], include_authorized_operations: bool = False) -> list[dict]:
        from groupcoord.coordinator.groups.share import describe as share_describe

        async def one(group_id: str) -> dict:
            if not group_id:
                return share_describe.error_row("", ErrorCode.invalid_group_id, None)

            def op(shard: GroupShard, token: Any, now: int) -> Effects:
                fx = Effects()
                fx.reply(token, shard.describe_share_group(group_id, include_authorized_operations))
                return fx

            return await self._run(group_id, op, lambda e: share_describe.error_row(group_id, e, None))

        return list(await asyncio.gather(*(one(g) for g in group_ids)))

    def _share_group(self, group_id: str):
        return self.shard_for(group_id).share_groups.get(group_id)

    def share_group_members(self, group_id: str) -> set[str] | None:
        group = self._share_group(group_id)
        return None if group is None else set(group.members)

    def share_group_exists(self, group_id: str) -> bool:
        return self._share_group(group_id) is not None

    def share_group_is_empty(self, group_id: str) -> bool | None:
        group = self._share_group(group_id)
        return None if group is None else not group.members

    def share_state_partitions(self, group_id: str) -> ShareStatePartitions | None:
        group = self._share_group(group_id)
        return None if group is None else group.partitions

    async def mark_share_partitions_initialized(self, group_id: str, done: dict[uuid.UUID, set[int]]) -> dict:
        return await self._run(group_id, lambda s, t, now: s.share_partitions_initialized(group_id, done, t, now),
                               lambda e: {"error_code": e})

    async def mark_share_topics_deleting(self, group_id: str, topics: dict[uuid.UUID, str]) -> dict:
        return await self._run(group_id, lambda s, t, now: s.share_topics_deleting(group_id, topics, t, now),
                               lambda e: {"error_code": e})

    async def forget_share_topics_deleting(self, group_id: str, topic_ids: set[uuid.UUID]) -> dict:
        return await self._run(group_id, lambda s, t, now: s.share_topics_deleted(group_id, set(topic_ids), t, now),
                               lambda e: {"error_code": e})

    async def _delete_share_state(self, group_id: str) -> ErrorCode | None:
        """Kafka's deleteShareGroups for one id: None when it is not a share group; else the error that stops
        its deletion (NON_EMPTY_GROUP, or the persister's) or NONE."""
        prepared = await self._run(group_id, lambda s, t, now: s.prepare_share_group_deletion(group_id, t, now),
                                   lambda e: {"error_code": e, "partitions": {}})
        error = prepared["error_code"]
        if error is None or error != ErrorCode.none:
            return error
        partitions = prepared["partitions"]
        if self.share_persister is None or not partitions:
            return ErrorCode.none
        pairs = [(t, p) for t, ps in sorted(partitions.items(), key=lambda kv: str(kv[0])) for p in sorted(ps)]
        try:
            errors = await self.share_persister.delete(group_id, pairs)
        except Exception as exc:
            self._log.error("share group state deletion failed", group_id=group_id, error=repr(exc))
            return ErrorCode.unknown_server_error
        for e in (errors or {}).values():
            if int(e) != 0:
                return ErrorCode(int(e))
        return ErrorCode.none

    def commit_offsets(self, req: OffsetCommit) -> asyncio.Future[dict]:
        def on_error(e: ErrorCode) -> dict:
            return {
                "throttle_time": 0,
                "topics": [{"name": t, "partitions": [{"partition_index": p.partition, "error_code": e} for p in ps]} for t, ps in req.topics],
            }

        return self._run(req.group_id, lambda s, t, now: s.handle_offset_commit(req, t, now), on_error)

    def commit_transactional_offsets(self, req: TxnOffsetCommit) -> asyncio.Future[dict]:
        def on_error(e: ErrorCode) -> dict:
            return {
                "throttle_time": 0,
                "topics": [{"name": t, "partitions": [{"partition_index": p.partition, "error_code": e} for p in ps]} for t, ps in req.topics],
            }

        return self._run(req.group_id, lambda s, t, now: s.handle_txn_offset_commit(req, t, now), on_error)

    def partition_for(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of a group (AddOffsetsToTxn adds it to the transaction)."""
        return partition_for(group_id, self.num_partitions)

    def complete_transaction(self, partition: int, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                             committed: bool) -> asyncio.Future[dict]:
        """A transaction marker for one ``__consumer_offsets`` partition (WriteTxnMarkers routes them here):
        the control batch is appended and the producer's pending offsets there become committed or vanish.
        Resolves to {"error_code": ...} once the marker is durable."""
        if not 0 <= partition < self.num_partitions:
            future = asyncio.get_running_loop().create_future()
            future.set_result({"error_code": ErrorCode.unknown_topic_or_partition})
            return future
        return self._runtime.run(
            partition,
            lambda s, t, now: s.complete_transaction(producer_id, producer_epoch, coordinator_epoch, committed, t, now),
            lambda e: {"error_code": e},
        )

    def fetch_offsets(self, req: OffsetFetch) -> asyncio.Future[dict]:
        """Answered from durable state (Kafka's read operation at the last committed offset): an offset whose
        record is still being written, or queued behind a stalled write, is answered as it was before that
        write, at once, so a fetch never shows an offset that could be lost and never waits on another
        client's write. With ``require_stable`` (Kafka's write operation) the answer waits for the shard's
        pending writes, and answers NOT_COORDINATOR if they are not durable within
        ``offsets.commit.timeout.ms`` (GroupCoordinatorService.handleOffsetFetchException). A partition whose
        durable state cannot be told from plain records (it holds transactional ones) waits as well."""
        partition = partition_for(req.group_id, self.num_partitions)
        pending = None if req.require_stable else self._runtime.pending_records(partition)
        if pending is not None:
            future = asyncio.get_running_loop().create_future()
            future.set_result(self._durable_fetch(partition, req, pending))
            return future

        def op(shard: GroupShard, token: Any, now: int) -> Effects:
            fx = Effects()
            fx.on_timeout = lambda _response: {"group_id": req.group_id, "error_code": ErrorCode.not_coordinator,
                                               "topics": []}
            fx.reply(token, shard.fetch_offsets(req))
            return fx

        return self._run(req.group_id, op, lambda e: {"group_id": req.group_id, "error_code": e, "topics": []})

    def _durable_fetch(self, partition: int, req: OffsetFetch, pending: list[tuple[Any, Any]]) -> dict:
        """The live answer with every offset of a not-yet-durable record put back to its durable value (an
        offset that is not durable at all is left out of an all-topics answer, and answered -1 otherwise)."""
        answer = self._runtime.shard(partition).fetch_offsets(req)
        group_id = req.group_id
        undurable = {key for key, _value in pending if isinstance(key, OffsetCommitKey) and key.group == group_id}
        if not undurable or answer.get("error_code"):
            return answer
        topics_out = []
        for topic in answer["topics"]:
            parts = []
            for p in topic["partitions"]:
                key = OffsetCommitKey(group_id, topic["name"], p["partition_index"])
                if key in undurable and p["error_code"] == ErrorCode.none:
                    value = self._runtime.durable_value(partition, key)
                    if value is None and req.topics is None:
                        continue
                    p = partition_answer(p["partition_index"], value)
                parts.append(p)
            if parts or req.topics is not None:
                topics_out.append({**topic, "partitions": parts})
        return {**answer, "topics": topics_out}

    def delete_offsets(self, req: OffsetDelete) -> asyncio.Future[dict]:
        return self._run(
            req.group_id, lambda s, t, now: s.handle_offset_delete(req, t, now), lambda e: {"error_code": e, "throttle_time": 0, "topics": []}
        )

    async def delete_groups(self, group_ids: list[str]) -> list[dict]:
        async def one(group_id: str) -> dict:
            share_error = await self._delete_share_state(group_id) if group_id else None
            if share_error is not None and share_error != ErrorCode.none:
                return {"group_id": group_id, "error_code": share_error}
            result = await self._run(
                group_id, lambda s, t, now: s.handle_delete_group(group_id, t, now), lambda e: {"group_id": group_id, "error_code": e}
            )
            listener = self.share_group_deleted_listener
            if share_error is not None and result["error_code"] == ErrorCode.none and listener is not None:
                try:
                    listener(group_id)
                except Exception as exc:  # the deletion is durable; a listener's failure is only logged
                    self._log.error("share group deletion listener failed", group_id=group_id, error=repr(exc))
            return result

        return list(await asyncio.gather(*(one(g) for g in group_ids)))

    async def describe_groups(self, group_ids: list[str], *, include_authorized_operations: bool = False, version: int = 5) -> list[dict]:
        """Each group as of its shard's last durable write (answered behind that shard's pending appends)."""

        async def one(group_id: str) -> dict:
            def op(shard: GroupShard, token: Any, now: int) -> Effects:
                fx = Effects()
                fx.reply(token, shard.describe_group(group_id, include_authorized_operations=include_authorized_operations, version=version))
                return fx

            return await self._run(group_id, op, lambda e: described_error(group_id, e))

        return list(await asyncio.gather(*(one(g) for g in group_ids)))

    def list_groups(self, states_filter: tuple[str, ...] = (), types_filter: tuple[str, ...] = ()) -> tuple[ErrorCode, list[dict]]:
        """All shards; Kafka answers COORDINATOR_LOAD_IN_PROGRESS if any of its partitions is still loading."""
        error, listed = ErrorCode.none, []
        for shard in self._runtime.shards():
            shard_error, groups = shard.list_groups(states_filter, types_filter)
            if shard_error != ErrorCode.none:
                error = shard_error
            listed.extend(groups)
        return error, listed

    # ------------------------------------------------------------------ operations / metrics

    def iter_groups(self) -> Iterator[GroupView]:
        # views (two dataclasses) on the first listing or metrics scrape, not at start-up
        from groupcoord.coordinator.groups.views import consumer_group_view, group_view, share_group_view

        for shard in self._runtime.shards():
            for group in shard.iter_groups():
                yield group_view(group)
            for cgroup in list(shard.consumer_groups.values()):
                yield consumer_group_view(cgroup)
            for sgroup in list(shard.share_groups.values()):
                yield share_group_view(sgroup)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        return self.shard_for(group_id).committed_offsets(group_id)

    def purgatory_sizes(self) -> dict[str, int]:
        """Requests parked in the join and sync purgatories, and live heartbeat deadlines, over all shards."""
        sizes = {"join": 0, "sync": 0, "heartbeat": 0}
        for shard in self._runtime.shards():
            for group in shard.groups.values():
                sizes["join"] += group.awaiting_join
                sizes["sync"] += sum(1 for m in group.members.values() if m.is_awaiting_sync)
                sizes["heartbeat"] += len(group.members)
        return sizes

    def is_loading(self, group_id: str) -> bool:
        return self.shard_for(group_id).loading
