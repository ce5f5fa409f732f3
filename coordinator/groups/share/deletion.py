"""Deleting a share group (DeleteGroups): first its share-partition state, then the group itself.

Kafka 4.3 chains the two (GroupCoordinatorService.deleteGroups): ``prepare`` refuses a group with members and
moves every initialised or initialising topic to "deleting" (writing ShareGroupStatePartitionMetadata); the
service asks the share persister to delete that state; only then does ``delete_group`` write the group's
tombstones, in ShareGroup.createGroupTombstoneRecords' order.
"""

from __future__ import annotations

import uuid

from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share import records, state_metadata
from groupcoord.coordinator.groups.share.fencing import cancel_session
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.coordinator.groups.share.state_metadata import combine
from groupcoord.coordinator.groups.share.topics import name_of, resolve
from groupcoord.protocol.errors import ErrorCode


def prepare(state: ShardState, group: ShareGroup, fx: Effects, now: int) -> tuple[ErrorCode, dict[uuid.UUID, frozenset[int]]]:
    """(error, the share partitions whose state must be deleted); Kafka's sharePartitionDeleteRequests."""
    if group.members:
        return ErrorCode.non_empty_group, {}
    info = group.partitions
    if info is None:
        return ErrorCode.none, {}
    candidates = combine(info.initialized, info.initializing)
    for topic_id in info.deleting:  # a deletion that did not finish earlier is retried, whole topics
        name = name_of(state.topics, topic_id)
        found = resolve(state.topics, name) if name is not None else None
        if found is not None:
            candidates = combine(candidates, {topic_id: (name, frozenset(range(found[1])))})
    deleting = {t: name for t, (name, _) in candidates.items()}
    emit(state, fx, state_metadata.record(group.group_id, {}, {}, deleting), now)
    return ErrorCode.none, {t: ps for t, (_, ps) in candidates.items()}


def delete_group(state: ShardState, group: ShareGroup, now: int, fx: Effects) -> None:
    gid = group.group_id
    for mid in list(group.members):
        emit(state, fx, records.current_assignment_tombstone(gid, mid), now)
    for mid in list(group.members):
        emit(state, fx, records.target_assignment_tombstone(gid, mid), now)
    emit(state, fx, records.target_assignment_epoch_tombstone(gid), now)
    for mid in list(group.members):
        emit(state, fx, records.member_subscription_tombstone(gid, mid), now)
        cancel_session(state, gid, mid)
    emit(state, fx, state_metadata.tombstone(gid), now)
    emit(state, fx, records.group_epoch_tombstone(gid), now)
    state.log.info("share group deleted", group_id=gid)
