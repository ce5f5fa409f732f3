"""Share-partition state initialisation as the group coordinator drives it (Kafka 4.3's GroupMetadataManager:
subscribedTopicsChangeMap, addInitializingTopicsRecords, initializeShareGroupState, uninitializeShareGroupState,
initializedAssignmentPending).

A heartbeat that finds subscribed partitions neither initialised nor freshly initialising writes them as
"initializing" and hands the service an initialisation request; the service calls the share persister once
that record is durable and then marks the partitions initialised (or takes them back out of "initializing"
when the persister failed). Only initialised partitions are ever assigned.
"""

from __future__ import annotations

import uuid
from typing import Any

from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share import settings, state_metadata
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.coordinator.groups.share.state_metadata import InitMap, ShareStatePartitions, combine, subtract
from groupcoord.coordinator.groups.share.topics import name_of, resolve

PartitionsByTopic = dict[uuid.UUID, frozenset[int]]


def assignment_pending(group: ShareGroup) -> bool:
    """Kafka's initializedAssignmentPending: some subscribed topic's initialised partitions are not exactly
    what the target assignment covers, so a new assignment is due."""
    if not group.members or group.partitions is None or not group.partitions.initialized:
        return False
    subscribed = set(group.subscribed_topic_names())
    if not subscribed:
        return False
    assigned: dict[uuid.UUID, set[int]] = {}
    for a in group.target.values():
        for t, ps in a.items():
            assigned.setdefault(t, set()).update(ps)
    for topic_id, (name, parts) in group.partitions.initialized.items():
        if name in subscribed and assigned.get(topic_id) != set(parts):
            return True
    return False


def changes_to_initialize(state: ShardState, group: ShareGroup | None, subscribed: set[str], now: int) -> InitMap:
    """Kafka's subscribedTopicsChangeMap: subscribed partitions neither initialised nor initialising for less
    than ``group.share.initialize.retry.interval.ms``."""
    if not subscribed:
        return {}
    info = group.partitions if group is not None else None
    done: InitMap = {}
    if info is not None:
        delta = settings.initialize_retry_interval_ms(state)
        fresh = {t: v for t, v in info.initializing.items() if now - info.initializing_since.get(t, now) < delta}
        done = combine(info.initialized, fresh)
    out: InitMap = {}
    for name in sorted(subscribed):
        found = resolve(state.topics, name)
        if found is None:
            continue
        topic_id, count = found
        have = done.get(topic_id, ("", frozenset()))[1]
        if not have or len(have) < count:
            missing = frozenset(range(count)) - have
            if missing:
                out[topic_id] = (name, missing)
    return out


def mark_initializing(state: ShardState, group_id: str, changes: InitMap, fx: Effects, now: int) -> None:
    """Kafka's addInitializingTopicsRecords: the record with these partitions added to "initializing"
    (and their topics no longer "deleting")."""
    group = state.share_groups[group_id]
    info = group.partitions or ShareStatePartitions()
    initializing = combine(info.initializing, changes)
    deleting = {t: info.deleting_names.get(t, _name(state, t)) for t in info.deleting if t not in initializing}
    emit(state, fx, state_metadata.record(group_id, initializing, info.initialized, deleting), now)


def _name(state: ShardState, topic_id: uuid.UUID) -> str:
    return name_of(state.topics, topic_id) or "<UNKNOWN>"


def initialized(state: ShardState, group_id: str, done: PartitionsByTopic, token: Any, now: int) -> Effects:
    """Kafka's initializeShareGroupState: the persister holds these partitions' state now."""
    fx = Effects()
    group = state.share_groups.get(group_id)
    if group is not None and done:
        info = group.partitions or ShareStatePartitions()
        enriched = {t: (_name(state, t), frozenset(ps)) for t, ps in done.items()}
        initialized_map = combine(info.initialized, enriched)
        initializing = subtract(info.initializing, {t: frozenset(ps) for t, ps in done.items()})
        deleting = {t: info.deleting_names.get(t, _name(state, t)) for t in info.deleting}
        emit(state, fx, state_metadata.record(group_id, initializing, initialized_map, deleting), now)
    fx.reply(token, {"error_code": 0})
    return fx


def uninitialized(state: ShardState, group_id: str, failed: PartitionsByTopic, token: Any, now: int) -> Effects:
    """Kafka's uninitializeShareGroupState: the persister failed, so these partitions stop "initializing"
    (the next heartbeat asks again)."""
    fx = Effects()
    group = state.share_groups.get(group_id)
    info = group.partitions if group is not None else None
    if info is not None and info.initializing and failed:
        initializing = subtract(info.initializing, {t: frozenset(ps) for t, ps in failed.items()})
        deleting = {t: info.deleting_names.get(t, _name(state, t)) for t in info.deleting}
        emit(state, fx, state_metadata.record(group_id, initializing, info.initialized, deleting), now)
    fx.reply(token, {"error_code": 0})
    return fx


def mark_deleting(state: ShardState, group_id: str, topics: dict[uuid.UUID, str], token: Any, now: int) -> Effects:
    """For DeleteShareGroupOffsets (share-part): these topics move from initialised/initialising to deleting."""
    fx = Effects()
    group = state.share_groups.get(group_id)
    if group is not None and topics:
        info = group.partitions or ShareStatePartitions()
        gone = set(topics)
        initializing = {t: v for t, v in info.initializing.items() if t not in gone}
        initialized_map = {t: v for t, v in info.initialized.items() if t not in gone}
        deleting = {t: info.deleting_names.get(t, _name(state, t)) for t in info.deleting}
        deleting.update(topics)
        emit(state, fx, state_metadata.record(group_id, initializing, initialized_map, deleting), now)
    fx.reply(token, {"error_code": 0})
    return fx


def forget_deleting(state: ShardState, group_id: str, topic_ids: set[uuid.UUID], token: Any, now: int) -> Effects:
    """The persister deleted these topics' state: they leave "deleting" (Kafka's completeDeleteShareGroupOffsets)."""
    fx = Effects()
    group = state.share_groups.get(group_id)
    info = group.partitions if group is not None else None
    if info is not None and topic_ids & set(info.deleting):
        deleting = {t: info.deleting_names.get(t, _name(state, t)) for t in info.deleting if t not in topic_ids}
        emit(state, fx, state_metadata.record(group_id, dict(info.initializing), dict(info.initialized), deleting), now)
    fx.reply(token, {"error_code": 0})
    return fx


def prune_deleted_topics(state: ShardState, group: ShareGroup, fx: Effects, now: int) -> None:
    """Kafka's maybeCleanupShareGroupState for one group: topics that no longer exist leave "initializing",
    "initialized" and "deleting" (their share-partition state goes with the topic, on the share coordinator's
    side). Kafka runs it when its metadata image drops a topic; here the group's next heartbeat finds it."""
    info = group.partitions
    if info is None or state.topics is None or not hasattr(state.topics, "by_id"):
        return
    known = set(info.initializing) | set(info.initialized) | set(info.deleting)
    gone = {t for t in known if state.topics.by_id(t) is None}
    if not gone:
        return
    initializing = {t: v for t, v in info.initializing.items() if t not in gone}
    initialized_map = {t: v for t, v in info.initialized.items() if t not in gone}
    deleting = {t: info.deleting_names.get(t, _name(state, t)) for t in info.deleting if t not in gone}
    emit(state, fx, state_metadata.record(group.group_id, initializing, initialized_map, deleting), now)
