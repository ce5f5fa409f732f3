"""One ``__share_group_state`` partition (Kafka's ShareCoordinatorShard), sans I/O.

It holds the persisted state of every share partition (``group:topicId:partition``) that hashes here: the
state epoch, leader epoch, start offset and state batches. A write is appended as a ShareUpdate record with
only the batches it carries, or — the first time, and after ``share.coordinator.snapshot.update.records.per.snapshot``
updates — as a ShareSnapshot record holding the whole combined state, as Kafka does; replaying the log gives
the same state, so live state is always what a restart finds.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import structlog

from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_availability import availability_error
from groupcoord.coordinator.share import state_batches
from groupcoord.coordinator.share.records import (
    SNAPSHOT_KEY_TYPE,
    UPDATE_KEY_TYPE,
    ShareKey,
    ShareSnapshotValue,
    ShareUpdateValue,
    StateBatch,
    UnknownShareKey,
)
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass

SharePartitionKey = tuple[str, uuid.UUID, int]
DEFAULT_START_OFFSET = -1
DEFAULT_STATE_EPOCH = 0
READ_UNINITIALIZED = "The share partition has not been initialized."


@dataclass
class PersistedState:
    """What Kafka's ShareGroupOffset holds for one share partition."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...]
    create_timestamp: int
    write_timestamp: int
    delivery_complete_count: int = -1
    updates_since_snapshot: int = 0

    def snapshot_value(self) -> ShareSnapshotValue:
        return ShareSnapshotValue(self.snapshot_epoch, self.state_epoch, self.leader_epoch, self.start_offset,
                                  self.create_timestamp, self.write_timestamp, self.batches,
                                  self.delivery_complete_count)


@frozen_dataclass
class WriteData:
    """One share partition's WriteShareGroupState entry (-1 epochs/start: keep what is stored)."""

    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...]
    delivery_complete_count: int = -1


class ShareStateShard:
    def __init__(self, partition: int, config: Any, *,
                 partition_exists: Callable[[uuid.UUID, int], bool] = lambda _t, _p: True) -> None:
        self.partition = partition
        self.config = config
        self.partition_exists = partition_exists
        self.log = structlog.get_logger("groupcoord.share").bind(shard=partition)
        self.states: dict[SharePartitionKey, PersistedState] = {}
        self.loading = True
        self.unavailable: str | None = None

    @property
    def updates_per_snapshot(self) -> int:
        return getattr(self.config, "share_coordinator_snapshot_update_records_per_snapshot", 500)

    # ------------------------------------------------------------------ what the runtime needs

    def group_count(self) -> int:
        return len(self.states)

    def begin_load(self) -> None:
        self.loading = True
        self.unavailable = None
        self.states.clear()

    def replay(self, key: Any, value: Any, now: int, producer_id: int = -1) -> None:
        if isinstance(key, UnknownShareKey):
            self.log.warning("skipping __share_group_state record of unknown type", type=key.kind)
            return
        sp = key.share_partition
        if value is None:
            if key.kind == SNAPSHOT_KEY_TYPE:
                self.states.pop(sp, None)
            return
        if isinstance(value, ShareSnapshotValue):
            self.states[sp] = PersistedState(value.snapshot_epoch, value.state_epoch, value.leader_epoch,
                                             value.start_offset, value.state_batches, value.create_timestamp,
                                             value.write_timestamp, value.delivery_complete_count, 0)
            return
        assert isinstance(value, ShareUpdateValue)
        state = self.states.get(sp)
        if state is None:  # an update whose snapshot was deleted after it: Kafka takes it as the state
            self.states[sp] = PersistedState(value.snapshot_epoch, DEFAULT_STATE_EPOCH, value.leader_epoch,
                                             value.start_offset, value.state_batches, now, now,
                                             value.delivery_complete_count, 0)
            return
        start = state.start_offset if value.start_offset == -1 else value.start_offset
        state.batches = state_batches.combine(state.batches, value.state_batches, start)
        state.start_offset = start
        if value.leader_epoch != -1:
            state.leader_epoch = max(state.leader_epoch, value.leader_epoch)
        if value.delivery_complete_count != -1:
            state.delivery_complete_count = value.delivery_complete_count
        state.updates_since_snapshot += 1
        state.write_timestamp = now

    def replay_end_transaction(self, producer_id: int, committed: bool, now: int) -> None:
        """``__share_group_state`` holds no transactional batches."""

    def finish_load(self, now: int) -> None:
        self.loading = False

    def next_deadline(self) -> int | None:
        return None

    def tick(self, now: int) -> Effects:
        return Effects()

    def availability_error(self) -> ErrorCode | None:
        return availability_error(self.loading, self.unavailable)

    # ------------------------------------------------------------------ operations

    def _emit(self, fx: Effects, key: ShareKey, value: Any) -> None:
        fx.write(key, value)
        self.replay(key, value, 0)

    def initialize(self, sp: SharePartitionKey, state_epoch: int, start_offset: int, token: Any, now: int) -> Effects:
        """InitializeShareGroupState: a fresh snapshot with the new state epoch and start offset (no batches);
        an older state epoch than the stored one is fenced."""
        fx = Effects()
        error = self._check(sp)
        state = self.states.get(sp)
        if error is None and state is not None and state.state_epoch > state_epoch:
            error = ErrorCode.fenced_state_epoch
        if error is not None:
            fx.reply(token, {"error_code": error})
            return fx
        # Kafka's ShareGroupOffset.fromRequest: a known start offset (an alter) has nothing delivered past it
        # yet (0, so the lag can be computed); an unknown one (-1) leaves the count unknown too.
        value = ShareSnapshotValue(0 if state is None else state.snapshot_epoch + 1, state_epoch, -1, start_offset,
                                   now, now, (), -1 if start_offset == -1 else 0)
        self._emit(fx, ShareKey(SNAPSHOT_KEY_TYPE, *sp), value)
        fx.reply(token, {"error_code": ErrorCode.none})
        return fx

    def write(self, sp: SharePartitionKey, data: WriteData, token: Any, now: int) -> Effects:
        fx = Effects()
        error = self._check(sp)
        state = self.states.get(sp)
        if error is None and state is not None:
            if state.leader_epoch > data.leader_epoch:
                error = ErrorCode.fenced_leader_epoch
            elif state.state_epoch > data.state_epoch:
                error = ErrorCode.fenced_state_epoch
        if error is not None:
            fx.reply(token, {"error_code": error})
            return fx
        if state is None or state.updates_since_snapshot >= self.updates_per_snapshot:
            start = data.start_offset if state is None or data.start_offset != -1 else state.start_offset
            base = () if state is None else state.batches
            value: Any = ShareSnapshotValue(
                0 if state is None else state.snapshot_epoch + 1,
                data.state_epoch if state is None or data.state_epoch != -1 else state.state_epoch,
                data.leader_epoch if state is None or data.leader_epoch != -1 else state.leader_epoch,
                start, now if state is None else state.create_timestamp, now,
                state_batches.combine(base, data.batches, start),
                data.delivery_complete_count if state is None or data.delivery_complete_count != -1
                else state.delivery_complete_count)
            self._emit(fx, ShareKey(SNAPSHOT_KEY_TYPE, *sp), value)
        else:
            value = ShareUpdateValue(state.snapshot_epoch, data.leader_epoch, data.start_offset,
                                     state_batches.combine((), data.batches, data.start_offset),
                                     data.delivery_complete_count)
            self._emit(fx, ShareKey(UPDATE_KEY_TYPE, *sp), value)
        fx.reply(token, {"error_code": ErrorCode.none})
        return fx

    def read(self, sp: SharePartitionKey, leader_epoch: int) -> dict:
        """ReadShareGroupState: the state to start a share partition from (start -1 when initialised without
        one: the share partition then applies the group's share.auto.offset.reset)."""
        error = self._check(sp)
        state = self.states.get(sp)
        if error is None and state is not None and state.leader_epoch > leader_epoch >= 0:
            error = ErrorCode.fenced_leader_epoch
        if error is not None:
            return {"error_code": error, "state_epoch": 0, "start_offset": -1, "state_batches": ()}
        if state is None:
            # Kafka 4.3: only a share partition the group coordinator initialised can be read.
            return {"error_code": ErrorCode.invalid_request, "state_epoch": DEFAULT_STATE_EPOCH,
                    "start_offset": DEFAULT_START_OFFSET, "state_batches": (),
                    "error_message": READ_UNINITIALIZED}
        if leader_epoch > state.leader_epoch:
            state.leader_epoch = leader_epoch
        return {"error_code": ErrorCode.none, "state_epoch": state.state_epoch, "start_offset": state.start_offset,
                "state_batches": state.batches}

    def read_summary(self, sp: SharePartitionKey) -> dict:
        error = self._check(sp)
        state = self.states.get(sp)
        if error is not None:
            return {"error_code": error, "state_epoch": 0, "leader_epoch": -1, "start_offset": -1,
                    "delivery_complete_count": -1}
        if state is None:
            return {"error_code": ErrorCode.none, "state_epoch": DEFAULT_STATE_EPOCH, "leader_epoch": -1,
                    "start_offset": DEFAULT_START_OFFSET, "delivery_complete_count": -1}
        return {"error_code": ErrorCode.none, "state_epoch": state.state_epoch, "leader_epoch": state.leader_epoch,
                "start_offset": state.start_offset, "delivery_complete_count": state.delivery_complete_count}

    def delete(self, sp: SharePartitionKey, token: Any, now: int) -> Effects:
        """DeleteShareGroupState: tombstones for both record kinds of the share partition."""
        fx = Effects()
        error = self.availability_error()
        if error is not None:
            fx.reply(token, {"error_code": error})
            return fx
        if sp in self.states:
            self._emit(fx, ShareKey(SNAPSHOT_KEY_TYPE, *sp), None)
            fx.write(ShareKey(UPDATE_KEY_TYPE, *sp), None)
        fx.reply(token, {"error_code": ErrorCode.none})
        return fx

    def _check(self, sp: SharePartitionKey) -> ErrorCode | None:
        error = self.availability_error()
        if error is not None:
            return error
        _group, topic_id, partition = sp
        if partition < 0:
            return ErrorCode.invalid_request
        if not self.partition_exists(topic_id, partition):
            return ErrorCode.unknown_topic_or_partition
        return None
