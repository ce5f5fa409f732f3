"""Offsets committed inside a transaction (TxnOffsetCommit) and the markers that settle them.

After Kafka's OffsetMetadataManager: a TxnOffsetCommit is written as offset-commit records in a
transactional batch of the producer (its id and epoch, the transactional bit) and stays pending until
the transaction coordinator's marker lands in this ``__consumer_offsets`` partition (WriteTxnMarkers).
A COMMIT marker makes each pending offset the committed one, unless a plain commit of the same
partition was written after it; an ABORT marker drops them. Replay does the same from the log, so a
restart between commit and marker keeps the offsets pending, never visible. OffsetFetch with
``require_stable`` answers UNSTABLE_OFFSET_COMMIT while a partition has one pending (KIP-447).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groupcoord.coordinator.groups.classic.validation import offset_commit_error
from groupcoord.coordinator.groups.offsets.topics import answer_commits
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue
from groupcoord.coordinator.groups.runtime.effects import Effects, EndMarker, TransactionalRecords
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.consumer.group import ConsumerGroup
    from groupcoord.coordinator.groups.lazy_requests import TxnOffsetCommit  # annotations only


def _consumer_error(group: ConsumerGroup, req: TxnOffsetCommit) -> ErrorCode | None:
    """ConsumerGroup.validateOffsetCommit with isTransactional; a stale member epoch is answered as
    ILLEGAL_GENERATION (what the transactional producer understands)."""
    if req.generation_id < 0 and not group.members:
        return None
    member = group.members.get(req.member_id)
    if member is None:
        return ErrorCode.unknown_member_id
    if req.generation_id != member.member_epoch:
        return ErrorCode.illegal_generation
    return None


def group_error(state: ShardState, req: TxnOffsetCommit) -> ErrorCode | None:
    """Kafka's validateTransactionalOffsetCommit: an unknown group is accepted (as a simple group) only
    from a producer that names no generation."""
    error = state.request_error(req.group_id)
    if error is not None:
        return error
    consumer_group = state.consumer_groups.get(req.group_id)
    if consumer_group is not None:
        return _consumer_error(consumer_group, req)
    group = state.groups.get(req.group_id)
    if group is None:
        return None if req.generation_id < 0 else ErrorCode.illegal_generation
    return offset_commit_error(group, req.generation_id, req.member_id, req.group_instance_id, transactional=True)


def handle_txn_offset_commit(state: ShardState, req: TxnOffsetCommit, token: Any, now: int) -> Effects:
    fx = Effects()
    error = group_error(state, req)
    records: list[tuple[OffsetCommitKey, OffsetCommitValue]] = []
    topics_out = answer_commits(state, req.topics, error, lambda topic, p: records.append((
        OffsetCommitKey(req.group_id, topic, p.partition),
        OffsetCommitValue(p.offset, p.leader_epoch, p.metadata or "", now, None))))
    if records:
        fx.write_batch(TransactionalRecords(req.producer_id, req.producer_epoch, tuple(records)))
        for key, value in records:
            apply_pending_offset(state, req.producer_id, key, value, now)
        state.observer.on_offsets_committed(req.group_id, len(records))
    fx.reply(token, {"throttle_time": 0, "topics": topics_out})
    return fx


def apply_pending_offset(state: ShardState, producer_id: int, key: OffsetCommitKey, value: OffsetCommitValue | None,
                         now: int) -> None:
    """A record of a transactional batch, live or replayed: pending under its producer until the marker."""
    if value is None:
        return  # Kafka writes no transactional tombstones
    if key.group not in state.consumer_groups and key.group not in state.groups:
        state.create_group(key.group, now)  # as Kafka's getOrMaybeCreateClassicGroup(groupId, true)
    where = (key.group, key.topic, key.partition)
    state.pending_txn_offsets.setdefault(producer_id, {})[where] = (state.take_offset_order(), value)
    state.pending_by_partition.setdefault(where, set()).add(producer_id)


def apply_end_marker(state: ShardState, producer_id: int, committed: bool, now: int) -> None:
    """Kafka's replayEndTransactionMarker: the producer's pending offsets become committed, or vanish."""
    pending = state.pending_txn_offsets.pop(producer_id, None)
    if not pending:
        return
    for where, (order, value) in pending.items():
        producers = state.pending_by_partition.get(where)
        if producers is not None:
            producers.discard(producer_id)
            if not producers:
                del state.pending_by_partition[where]
        still_pending = where in state.pending_by_partition
        if committed:
            group_id, topic, partition = where
            group = state.consumer_groups.get(group_id) or state.groups.get(group_id)
            # Skipped when the group was deleted while the transaction was open, or when a plain commit (or
            # another producer's transaction) written after this one already set the partition, as in Kafka.
            if group is not None and state.offset_order.get(where, 0) <= order:
                group.offsets[(topic, partition)] = value
                if still_pending:
                    state.offset_order[where] = order
        if not still_pending:
            state.offset_order.pop(where, None)  # nothing pending is left to compare with it


def complete_transaction(state: ShardState, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                         committed: bool, token: Any, now: int) -> Effects:
    """WriteTxnMarkers for this partition: the marker is written, then applied (Kafka's completeTransaction)."""
    fx = Effects()
    error = state.availability_error()
    if error is not None:
        fx.reply(token, {"error_code": error})
        return fx
    fx.write_batch(EndMarker(producer_id, producer_epoch, coordinator_epoch, committed))
    apply_end_marker(state, producer_id, committed, now)
    fx.reply(token, {"error_code": ErrorCode.none})
    return fx
