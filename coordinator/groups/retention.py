"""Offset expiry (KIP-211) and the removal of empty groups that have nothing left: a periodic pass on its own timer."""

from __future__ import annotations

from typing import Callable

from groupcoord.coordinator.groups.classic import deletion as classic_deletion
from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.offsets.pending import has_pending, pending_partitions
from groupcoord.coordinator.groups.offsets.tombstones import delete_offsets
from groupcoord.coordinator.groups.offsets_records import OffsetCommitValue
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.protocol.names import CONSUMER_PROTOCOL_TYPE

RETENTION = "retention"  # the one timer key of the periodic pass


def expiry_base(group: ClassicGroup) -> Callable[[OffsetCommitValue], int] | None:
    """From when an offset's retention runs, or None when the group's offsets cannot expire now.

    * a group with a protocol that is Empty: from when it became Empty (or the commit, for records without that time);
    * a Stable consumer group that knows its subscriptions: from the commit, for topics it no longer subscribes to;
    * a standalone group (never had members): from the commit.
    """
    if group.protocol_type is not None:
        if group.state is GroupState.EMPTY:
            if group.current_state_timestamp >= 0:
                return lambda value: group.current_state_timestamp
            return lambda value: value.commit_timestamp
        if group.protocol_type == CONSUMER_PROTOCOL_TYPE and group.subscribed is not None and group.state is GroupState.STABLE:
            return lambda value: value.commit_timestamp
        return None
    return lambda value: value.commit_timestamp


def is_expired(value: OffsetCommitValue, base: int, now: int, retention_ms: int) -> bool:
    if value.expire_timestamp is not None:
        return now >= value.expire_timestamp  # an explicit expiry (OffsetCommit v2-v4 retention time) wins
    return now - base >= retention_ms


def expire_offsets(state: ShardState, now: int) -> Effects:
    fx = Effects()
    retention_ms = state.config.offsets_retention_minutes * 60_000
    for group in list(state.groups.values()):
        base = expiry_base(group)
        if base is not None:
            expired = [
                tp
                for tp, value in group.offsets.items()
                if not group.is_subscribed_to(tp[0]) and is_expired(value, base(value), now, retention_ms)
                and not has_pending(state, group.group_id, *tp)  # never while a transaction may still change it
            ]
            delete_offsets(state, group.group_id, sorted(expired), now, fx)
            if expired:
                state.log.info("offsets expired", group_id=group.group_id, count=len(expired))
                state.observer.on_offsets_expired(group.group_id, len(expired))
        if (group.state is GroupState.EMPTY and not group.offsets and not group.members
                and not pending_partitions(state, group.group_id)):  # its transaction may still commit offsets
            classic_deletion.delete_group(state, group, "empty group without offsets removed by the retention pass", now, fx)
    for cgroup in list(state.consumer_groups.values()):
        # Kafka's ConsumerGroup expiration: from the commit time, for topics the group does not subscribe to.
        subscribed = cgroup.subscribed_topic_names()
        expired = [tp for tp, value in cgroup.offsets.items()
                   if tp[0] not in subscribed and is_expired(value, value.commit_timestamp, now, retention_ms)
                   and not has_pending(state, cgroup.group_id, *tp)]
        delete_offsets(state, cgroup.group_id, sorted(expired), now, fx)
        if expired:
            state.log.info("offsets expired", group_id=cgroup.group_id, count=len(expired))
            state.observer.on_offsets_expired(cgroup.group_id, len(expired))
        if not cgroup.members and not cgroup.offsets:
            from groupcoord.coordinator.groups.consumer import deletion as consumer_deletion  # the first such group's

            consumer_deletion.delete_group(state, cgroup, now, fx)
    return fx


def schedule(state: ShardState, now: int) -> None:
    """The next pass runs one check interval from ``now``."""
    state.timer.schedule((RETENTION,), now + state.config.offsets_retention_check_interval_ms, _retention_pass)


def _retention_pass(state: ShardState, now: int) -> Effects:
    fx = expire_offsets(state, now)
    schedule(state, now)
    return fx
