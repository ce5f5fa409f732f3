"""One shard of the coordinator: the groups of one ``__consumer_offsets`` partition, sans I/O.

Every operation takes ``now`` (milliseconds) and returns ``Effects``: records to
append to this shard's partition and replies to release once they are durable.
Parked requests (JoinGroup, SyncGroup) are answered later, in the ``Effects`` of
whatever operation or timer completes them. The runtime calls ``tick`` when
``next_deadline`` passes. Nothing here blocks, sleeps or reads a clock.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Iterator

import structlog

from groupcoord.coordinator.groups import admin, heartbeat, join, leave, offsets, rebalance as rb, replay, retention, sync
from groupcoord.coordinator.groups.consumer import describe as cg_describe, heartbeat as cg_heartbeat
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup
from groupcoord.coordinator.groups.consumer.requests import ConsumerGroupHeartbeat
from groupcoord.coordinator.groups.effects import Effects
from groupcoord.coordinator.groups.group import ClassicGroup
from groupcoord.coordinator.groups.observer import ObserverAdapter
from groupcoord.coordinator.groups.requests import (
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    OffsetCommit,
    OffsetDelete,
    OffsetFetch,
    SyncGroup,
)
from groupcoord.coordinator.groups.state import GroupState
from groupcoord.coordinator.groups.timers import TimerHeap
from groupcoord.protocol.errors import ErrorCode

RETENTION = "retention"


def random_member_id(prefix: str) -> str:
    """Kafka's member id: the client id (or group.instance.id) and a random UUID."""
    return f"{prefix}-{uuid.uuid4()}"


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
        self.partition = partition
        self.config = config
        self.topics = topics
        self.observer = ObserverAdapter(observer)
        self.groups: dict[str, ClassicGroup] = {}
        self.consumer_groups: dict[str, ConsumerGroup] = {}  # KIP-848 groups; a group id is in one of the two
        self.timers = TimerHeap()
        self.loading = False
        self.unavailable: str | None = None  # why this shard's partition could not be loaded, if it could not
        self.log = structlog.get_logger("groupcoord.groups").bind(shard=partition)
        self._new_member_id = member_id_factory

    # ------------------------------------------------------------------ shared helpers (used by the API modules)

    def availability_error(self) -> ErrorCode | None:
        """Why this shard cannot answer for its groups right now, if it cannot."""
        if self.unavailable is not None:
            return ErrorCode.coordinator_not_available
        if self.loading:
            return ErrorCode.coordinator_load_in_progress
        return None

    def new_member_id(self, prefix: str) -> str:
        return self._new_member_id(prefix)

    def create_group(self, group_id: str, now: int) -> ClassicGroup:
        group = ClassicGroup(group_id=group_id, current_state_timestamp=now)
        self.groups[group_id] = group
        return group

    def on_transition(self, group: ClassicGroup, old: GroupState, new: GroupState, reason: str) -> None:
        self.log.info(
            "group state change",
            group_id=group.group_id,
            old=old.value,
            new=new.value,
            generation=group.generation,
            members=group.size,
            reason=reason,
        )
        self.observer.on_state_change(group.group_id, old.value, new.value, reason)

    def log_member(self, group: ClassicGroup, member_id: str, event: str, reason: str) -> None:
        self.log.info(f"member {event}", group_id=group.group_id, member_id=member_id, reason=reason)
        hook = {"joined": self.observer.on_member_joined, "left": self.observer.on_member_left}.get(event, self.observer.on_member_expired)
        hook(group.group_id, member_id, reason)

    # ------------------------------------------------------------------ APIs

    def handle_join(self, req: JoinGroup, token: Any, now: int) -> Effects:
        return join.handle_join(self, req, token, now)

    def handle_sync(self, req: SyncGroup, token: Any, now: int) -> Effects:
        return sync.handle_sync(self, req, token, now)

    def handle_heartbeat(self, req: Heartbeat, token: Any, now: int) -> Effects:
        return heartbeat.handle_heartbeat(self, req, token, now)

    def handle_leave(self, req: LeaveGroup, token: Any, now: int) -> Effects:
        return leave.handle_leave(self, req, token, now)

    def handle_offset_commit(self, req: OffsetCommit, token: Any, now: int) -> Effects:
        return offsets.handle_offset_commit(self, req, token, now)

    def handle_offset_delete(self, req: OffsetDelete, token: Any, now: int) -> Effects:
        return offsets.handle_offset_delete(self, req, token, now)

    def handle_delete_group(self, group_id: str, token: Any, now: int) -> Effects:
        return admin.handle_delete_group(self, group_id, token, now)

    def handle_consumer_group_heartbeat(self, req: ConsumerGroupHeartbeat, token: Any, now: int) -> Effects:
        return cg_heartbeat.handle(self, req, token, now)

    def describe_consumer_group(self, group_id: str, include_authorized_operations: bool = False) -> dict:
        return cg_describe.describe(self, group_id, include_authorized_operations)

    def fetch_offsets(self, req: OffsetFetch) -> dict:
        return offsets.fetch_offsets(self, req)

    def describe_group(self, group_id: str, *, include_authorized_operations: bool = False, version: int = 5) -> dict:
        return admin.describe_group(self, group_id, include_authorized_operations=include_authorized_operations, version=version)

    def list_groups(self, states_filter: tuple[str, ...] = (), types_filter: tuple[str, ...] = ()) -> tuple[ErrorCode, list[dict]]:
        return admin.list_groups(self, states_filter, types_filter)

    # ------------------------------------------------------------------ time

    def next_deadline(self) -> int | None:
        return self.timers.next_deadline()

    def tick(self, now: int) -> Effects:
        """Fire every timer due at ``now``: delayed joins, session expiries, pending syncs, the retention pass."""
        fx = Effects()
        for key in self.timers.pop_due(now):
            kind = key[0]
            if kind == RETENTION:
                fx.extend(retention.expire_offsets(self, now))
                self.timers.schedule((RETENTION,), now + self.config.offsets_retention_check_interval_ms)
                continue
            if kind in (cg_heartbeat.SESSION, cg_heartbeat.REBALANCE):
                cg_heartbeat.on_timer(self, key, now, fx)
                continue
            group = self.groups.get(key[1])
            if group is None:
                continue
            if kind == rb.HEARTBEAT:
                rb.on_heartbeat_deadline(self, group, key[2], now, fx)
            elif kind == rb.PENDING_MEMBER:
                if key[2] in group.pending_members:
                    self.log_member(group, key[2], "expired", "pending member did not rejoin within its session timeout")
                    rb.remove_pending_member_and_update_group(self, group, key[2], now, fx)
            elif kind == rb.JOIN:
                rb.on_join_deadline(self, group, now, fx)
            elif kind == rb.PENDING_SYNC:
                rb.on_pending_sync_deadline(self, group, now, fx)
        return fx

    # ------------------------------------------------------------------ loading

    def begin_load(self) -> None:
        """Forget everything and answer COORDINATOR_LOAD_IN_PROGRESS until ``finish_load``."""
        self.loading = True
        self.unavailable = None
        self.groups.clear()
        self.consumer_groups.clear()
        self.timers = TimerHeap()

    def replay(self, key: Any, value: Any, now: int) -> None:
        replay.apply_record(self, key, value, now)

    def finish_load(self, now: int) -> None:
        """Loaded members get a full session from now to heartbeat; the retention pass is scheduled."""
        for group in self.groups.values():
            for member in group.members.values():
                rb.schedule_heartbeat(self, group, member, now)
        cg_heartbeat.schedule_loaded(self, now)
        self.timers.schedule((RETENTION,), now + self.config.offsets_retention_check_interval_ms)
        self.loading = False

    # ------------------------------------------------------------------ read-only views

    def iter_groups(self) -> Iterator[ClassicGroup]:
        return iter(list(self.groups.values()))

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        group = self.consumer_groups.get(group_id) or self.groups.get(group_id)
        if group is None:
            return {}
        return {tp: value.offset for tp, value in sorted(tuple(group.offsets.items()))}
