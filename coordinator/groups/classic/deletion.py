"""Deleting a classic group, when DeleteGroups or the retention pass removes it."""

from __future__ import annotations

from groupcoord.coordinator.groups.classic import rebalance
from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.records import group_tombstone
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.offsets.tombstones import delete_all_offsets
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState


def delete_group(state: ShardState, group: ClassicGroup, reason: str, now: int, fx: Effects) -> None:
    """Tombstones for every offset and the group itself; the group turns Dead and is forgotten."""
    delete_all_offsets(state, group.group_id, group.offsets, now, fx)
    rebalance.cancel_group_timers(state, group)
    rebalance.transition(state, group, GroupState.DEAD, now, reason)
    emit(state, fx, group_tombstone(group.group_id), now)
