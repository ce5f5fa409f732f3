"""The async runtime around the sans-I/O shards: logs, durability, timers, loading.

One ``GroupShard`` per ``__consumer_offsets`` partition. A request runs on its
shard synchronously (the event loop serialises a shard's events); the records it
produced are appended to the shard's partition by that shard's writer, and its
replies are released only once those records, and every earlier write of the
shard, are durable. If an append fails, the in-memory state may be ahead of the
log, so the shard reloads itself from the log (the log is the truth), answering
COORDINATOR_LOAD_IN_PROGRESS meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import structlog

from groupcoord.coordinator.groups.admin import described_error
from groupcoord.coordinator.clock import Clock, SystemClock
from groupcoord.coordinator.groups.consumer import describe as cg_describe, heartbeat as cg_heartbeat
from groupcoord.coordinator.groups.consumer.requests import ConsumerGroupHeartbeat
from groupcoord.coordinator.groups.effects import Effects
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.observer import ObserverAdapter
from groupcoord.coordinator.groups.rebalance import join_error, sync_error
from groupcoord.coordinator.groups.requests import (
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    SyncGroup,
)
from groupcoord.coordinator.groups.shard import GroupShard, random_member_id
from groupcoord.coordinator.groups.views import GroupView, consumer_group_view, group_view
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC
from groupcoord.protocol.record_batch import decode_records, encode_batch
from groupcoord.storage.config import CleanupPolicy, LogConfig
from groupcoord.coordinator.groups.offsets_records import decode_record, encode_key, encode_value

_log = structlog.get_logger("groupcoord.groups")

MAX_BATCH_BYTES = 900_000  # stay below the offsets topic's max.message.bytes (1 MiB) per batch

ErrorShape = Callable[[ErrorCode], dict]


@dataclass(eq=False)
class _Pending:
    """A request whose answer is not released yet, and how to answer it with an error instead."""

    future: asyncio.Future
    on_error: ErrorShape


@dataclass
class _ShardRuntime:
    shard: GroupShard
    log: Any = None
    queue: list[Effects] = field(default_factory=list)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    writer: asyncio.Task | None = None
    timer: asyncio.TimerHandle | None = None
    timer_deadline: int | None = None
    outstanding: set[_Pending] = field(default_factory=set)
    writing: bool = False


def fail_response(response: dict, code: ErrorCode) -> dict:
    """The same answer with every error field set to ``code`` (used when its write could not be made durable)."""
    out = dict(response)
    if "error_code" in out:
        out["error_code"] = code
    if isinstance(out.get("topics"), list):
        out["topics"] = [
            {**t, "partitions": [{**p, "error_code": code} for p in t.get("partitions", [])]} for t in out["topics"]
        ]
    return out


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
        self.log_manager = log_manager
        self.topics = topics
        self.clock = clock or SystemClock()
        self.observer = ObserverAdapter(observer)
        self.num_partitions = config.offsets_topic_num_partitions
        self._runtimes = [
            _ShardRuntime(GroupShard(p, config, topics=topics, observer=observer, member_id_factory=member_id_factory))
            for p in range(self.num_partitions)
        ]
        for rt in self._runtimes:
            rt.shard.begin_load()
        self._started = False

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
        self._started = True
        started = time.perf_counter()
        await asyncio.gather(*(self._load_or_refuse(rt) for rt in self._runtimes))
        _log.info(
            "offsets partitions loaded",
            partitions=len(self._runtimes),
            groups=sum(len(rt.shard.groups) + len(rt.shard.consumer_groups) for rt in self._runtimes),
            seconds=round(time.perf_counter() - started, 4),
        )
        for rt in self._runtimes:
            rt.writer = asyncio.get_running_loop().create_task(self._write_loop(rt), name=f"groups-writer-{rt.shard.partition}")

    async def stop(self) -> None:
        self._started = False
        for rt in self._runtimes:
            if rt.timer is not None:
                rt.timer.cancel()
                rt.timer = None
            rt.wakeup.set()
        writers = [rt.writer for rt in self._runtimes if rt.writer is not None]
        await asyncio.gather(*writers, return_exceptions=True)
        for rt in self._runtimes:
            rt.writer = None
            for pending in list(rt.outstanding):
                if not pending.future.done():
                    pending.future.set_result(pending.on_error(ErrorCode.coordinator_not_available))
            rt.outstanding.clear()

    async def _load_or_refuse(self, rt: _ShardRuntime) -> None:
        """A partition that cannot be read or replayed takes only its own groups out of service, never the
        broker: they answer COORDINATOR_NOT_AVAILABLE, the log is left untouched for an operator (or
        `groupcoord log verify`) to look at, and the error says which partition and why."""
        try:
            await self._load(rt)
        except Exception as exc:
            rt.shard.unavailable = repr(exc)
            rt.shard.log.error("offsets partition could not be loaded; its groups answer COORDINATOR_NOT_AVAILABLE",
                               partition=f"{OFFSETS_TOPIC}-{rt.shard.partition}", error=repr(exc))

    async def _load(self, rt: _ShardRuntime) -> None:
        started = time.perf_counter()
        shard = rt.shard
        shard.begin_load()
        if rt.log is None:
            rt.log = await self.log_manager.get_or_create(OFFSETS_TOPIC, shard.partition, self.log_config)
        count = 0
        now = self.clock.wall_ms()
        async for header, raw in rt.log.batches(0):
            if header.is_control:
                continue
            if header.is_transactional:
                # Transactional offset commits are not produced by this coordinator; Kafka's own are skipped here.
                shard.log.warning("skipping transactional batch in offsets log", base_offset=header.base_offset)
                continue
            for record in decode_records(raw, 0, header):
                if record.key is None:
                    continue
                shard.replay(*decode_record(record.key, record.value), now)
                count += 1
        shard.finish_load(self.clock.wall_ms())
        seconds = time.perf_counter() - started
        shard.log.debug("offsets partition loaded", records=count, groups=len(shard.groups), seconds=round(seconds, 4))
        self.observer.on_shard_loaded(shard.partition, seconds, count)
        self._reschedule(rt)

    # ------------------------------------------------------------------ running operations

    def shard_for(self, group_id: str) -> GroupShard:
        return self._runtimes[partition_for(group_id, self.num_partitions)].shard

    def _runtime_for(self, group_id: str) -> _ShardRuntime:
        return self._runtimes[partition_for(group_id, self.num_partitions)]

    def _run(self, group_id: str, op: Callable[[GroupShard, Any, int], Effects], on_error: ErrorShape) -> asyncio.Future[dict]:
        """Run `op` on the group's shard; the returned future holds the reply. It is often resolved
        already (a heartbeat, a commit that had nothing to write), and the server then answers
        without creating a task — the hot path of a busy coordinator."""
        rt = self._runtime_for(group_id)
        future = asyncio.get_running_loop().create_future()
        pending = _Pending(future, on_error)
        rt.outstanding.add(pending)
        future.add_done_callback(lambda _f: rt.outstanding.discard(pending))
        fx = op(rt.shard, future, self.clock.wall_ms())
        self._submit(rt, fx)
        self._reschedule(rt)
        return future

    def _submit(self, rt: _ShardRuntime, fx: Effects) -> None:
        if not fx:
            return
        if not fx.records and not rt.queue and not rt.writing:
            self._release(fx.replies)
            return
        rt.queue.append(fx)
        rt.wakeup.set()

    @staticmethod
    def _release(replies: list[tuple[Any, dict]]) -> None:
        for future, response in replies:
            if not future.done():
                future.set_result(response)

    async def _write_loop(self, rt: _ShardRuntime) -> None:
        linger = getattr(self.config, "group_coordinator_append_linger_ms", 0) / 1000.0
        while self._started or rt.queue:
            if not rt.queue:
                rt.wakeup.clear()
                await rt.wakeup.wait()
                continue
            if linger > 0:
                await asyncio.sleep(linger)
            batch, rt.queue = rt.queue, []
            rt.writing = True
            try:
                records = [(encode_key(k), encode_value(v)) for fx in batch for k, v in fx.records]
                if records:
                    await self._append(rt, records)
            except Exception as exc:  # the write is not durable: answer with errors and reload from the log
                shard = rt.shard
                shard.log.error("offsets append failed; reloading shard from its log", error=repr(exc))
                for fx in batch:
                    for future, response in fx.replies:
                        if not future.done():
                            future.set_result(fail_response(response, ErrorCode.not_coordinator))
                await self._reload_after_failure(rt)
            else:
                for fx in batch:
                    self._release(fx.replies)
            finally:
                rt.writing = False

    async def _append(self, rt: _ShardRuntime, records: list[tuple[bytes, bytes | None]]) -> None:
        now = self.clock.wall_ms()
        compression = getattr(self.config, "offsets_topic_compression_codec", 0)
        chunk: list[tuple[bytes, bytes | None, tuple]] = []
        size = 0
        for key, value in records:
            n = len(key) + (len(value) if value else 0) + 32
            if chunk and size + n > MAX_BATCH_BYTES:
                await rt.log.append(encode_batch(chunk, base_timestamp=now, compression=compression))
                chunk, size = [], 0
            chunk.append((key, value, ()))
            size += n
        if chunk:
            await rt.log.append(encode_batch(chunk, base_timestamp=now, compression=compression))

    async def _reload_after_failure(self, rt: _ShardRuntime) -> None:
        for pending in list(rt.outstanding):
            if not pending.future.done():
                pending.future.set_result(pending.on_error(ErrorCode.not_coordinator))
        for fx in rt.queue:
            for future, response in fx.replies:
                if not future.done():
                    future.set_result(fail_response(response, ErrorCode.not_coordinator))
        rt.queue = []
        await self._load_or_refuse(rt)

    # ------------------------------------------------------------------ timers

    def _reschedule(self, rt: _ShardRuntime) -> None:
        deadline = rt.shard.next_deadline()
        if deadline == rt.timer_deadline and rt.timer is not None:
            return
        if rt.timer is not None:
            rt.timer.cancel()
            rt.timer = None
        rt.timer_deadline = deadline
        if deadline is None or not self._started:
            return
        loop = asyncio.get_running_loop()
        delay = max(deadline - self.clock.wall_ms(), 0) / 1000.0
        rt.timer = loop.call_at(loop.time() + delay, self._on_timer, rt)

    def _on_timer(self, rt: _ShardRuntime) -> None:
        rt.timer = None
        rt.timer_deadline = None
        if rt.shard.loading:
            return
        self._submit(rt, rt.shard.tick(self.clock.wall_ms()))
        self._reschedule(rt)

    # ------------------------------------------------------------------ APIs

    def join_group(self, req: JoinGroup) -> asyncio.Future[dict]:
        return self._run(req.group_id, lambda s, t, now: s.handle_join(req, t, now), lambda e: join_error(req.member_id, e))

    def sync_group(self, req: SyncGroup) -> asyncio.Future[dict]:
        return self._run(
            req.group_id,
            lambda s, t, now: s.handle_sync(req, t, now),
            sync_error,
        )

    def heartbeat(self, req: Heartbeat) -> asyncio.Future[dict]:
        return self._run(req.group_id, lambda s, t, now: s.handle_heartbeat(req, t, now), lambda e: {"throttle_time": 0, "error_code": e})

    def leave_group(self, req: LeaveGroup) -> asyncio.Future[dict]:
        return self._run(
            req.group_id, lambda s, t, now: s.handle_leave(req, t, now), lambda e: {"throttle_time": 0, "error_code": e, "members": []}
        )

    def consumer_group_heartbeat(self, req: ConsumerGroupHeartbeat) -> asyncio.Future[dict]:
        return self._run(req.group_id, lambda s, t, now: s.handle_consumer_group_heartbeat(req, t, now),
                         lambda e: cg_heartbeat.error_response(e, None))

    async def describe_consumer_groups(self, group_ids: list[str], include_authorized_operations: bool = False) -> list[dict]:
        """Each group as of its shard's last durable write (answered behind that shard's pending appends)."""

        async def one(group_id: str) -> dict:
            def op(shard: GroupShard, token: Any, now: int) -> Effects:
                fx = Effects()
                fx.reply(token, shard.describe_consumer_group(group_id, include_authorized_operations))
                return fx

            return await self._run(group_id, op, lambda e: {**cg_describe.error_row(group_id, e, None)})

        return list(await asyncio.gather(*(one(g) for g in group_ids)))

    def commit_offsets(self, req: OffsetCommit) -> asyncio.Future[dict]:
        def on_error(e: ErrorCode) -> dict:
            return {
                "throttle_time": 0,
                "topics": [{"name": t, "partitions": [{"partition_index": p.partition, "error_code": e} for p in ps]} for t, ps in req.topics],
            }

        return self._run(req.group_id, lambda s, t, now: s.handle_offset_commit(req, t, now), on_error)

    def fetch_offsets(self, req: OffsetFetch) -> asyncio.Future[dict]:
        """Answered after the shard's pending writes are durable, so a fetch never shows an offset that could be lost."""

        def op(shard: GroupShard, token: Any, now: int) -> Effects:
            fx = Effects()
            fx.reply(token, shard.fetch_offsets(req))
            return fx

        return self._run(req.group_id, op, lambda e: {"group_id": req.group_id, "error_code": e, "topics": []})

    def delete_offsets(self, req: OffsetDelete) -> asyncio.Future[dict]:
        return self._run(
            req.group_id, lambda s, t, now: s.handle_offset_delete(req, t, now), lambda e: {"error_code": e, "throttle_time": 0, "topics": []}
        )

    async def delete_groups(self, group_ids: list[str]) -> list[dict]:
        async def one(group_id: str) -> dict:
            return await self._run(
                group_id, lambda s, t, now: s.handle_delete_group(group_id, t, now), lambda e: {"group_id": group_id, "error_code": e}
            )

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
        for rt in self._runtimes:
            shard_error, groups = rt.shard.list_groups(states_filter, types_filter)
            if shard_error != ErrorCode.none:
                error = shard_error
            listed.extend(groups)
        return error, listed

    # ------------------------------------------------------------------ operations / metrics

    def iter_groups(self) -> Iterator[GroupView]:
        for rt in self._runtimes:
            for group in rt.shard.iter_groups():
                yield group_view(group)
            for cgroup in list(rt.shard.consumer_groups.values()):
                yield consumer_group_view(cgroup)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        return self.shard_for(group_id).committed_offsets(group_id)

    def purgatory_sizes(self) -> dict[str, int]:
        """Requests parked in the join and sync purgatories, and live heartbeat deadlines, over all shards."""
        sizes = {"join": 0, "sync": 0, "heartbeat": 0}
        for rt in self._runtimes:
            for group in rt.shard.groups.values():
                sizes["join"] += group.awaiting_join
                sizes["sync"] += sum(1 for m in group.members.values() if m.is_awaiting_sync)
                sizes["heartbeat"] += len(group.members)
        return sizes

    def is_loading(self, group_id: str) -> bool:
        return self.shard_for(group_id).loading
