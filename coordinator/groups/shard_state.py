"""The state of one shard, as every group API takes it: groups, the timer, configuration and who to tell.

A plain object with no behaviour beyond bookkeeping that every API shares (the
availability check, creating a classic group, logging state changes and member
events), so API modules depend on it and never on the shard facade above them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.groups.observer import ObserverAdapter
from groupcoord.coordinator.groups.runtime.timers import CoordinatorTimer
from groupcoord.coordinator.groups.shard_availability import availability_error
from groupcoord.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from groupcoord.coordinator.groups.consumer.group import ConsumerGroup

TOPIC_PARTITIONS_CACHED = 200_000

_MEMBER_EVENTS = {"joined": "member joined", "left": "member left", "expired": "member expired"}  # log events, spelt once


@dataclass(eq=False)
class ShardState:
    """The plain state every group API takes: one shard's groups of each type, timer, config, topics, logger,
    observer."""
    partition: int
    config: Any
    topics: Any
    observer: ObserverAdapter
    log: Any  # structlog logger bound to the shard
    new_member_id: Callable[[str], str]  # Kafka's member id from a client id or group.instance.id
    groups: dict[str, ClassicGroup] = field(default_factory=dict)
    consumer_groups: dict[str, ConsumerGroup] = field(default_factory=dict)  # KIP-848 groups; a group id is in one of the three
    share_groups: dict[str, Any] = field(default_factory=dict)  # KIP-932 share groups (share.group.ShareGroup)
    # Told (group id, member id) when a share member leaves or is fenced: the share partitions release what it
    # had acquired. None: nobody to tell.
    share_member_listener: Callable[[str, str], None] | None = None
    timer: CoordinatorTimer[ShardState] = field(default_factory=CoordinatorTimer)
    loading: bool = False
    unavailable: str | None = None  # why this shard's partition could not be loaded, if it could not
    # With ACLs on: (member id, topics its regex matches) -> those the member's principal may DESCRIBE
    # (Kafka's TopicRegexResolver.filterTopicDescribeAuthorizedTopics). None: no filtering.
    regex_topic_filter: Callable[[str, set[str]], set[str]] | None = None
    # Transactional offsets (Kafka's OffsetMetadataManager.pendingTransactionalOffsets): per producer id, the
    # offsets its open transaction committed, each with the order it was written in; and which producers have
    # an offset pending per (group, topic, partition), for OffsetFetch's require_stable.
    pending_txn_offsets: dict[int, dict[tuple[str, str, int], tuple[int, Any]]] = field(default_factory=dict)
    pending_by_partition: dict[tuple[str, str, int], set[int]] = field(default_factory=dict)
    # The write order of the offset each (group, topic, partition) holds, and the next one to hand out: a
    # transactional offset only replaces a committed one written before it (Kafka compares record offsets).
    # Kept only while a transactional offset of that partition is pending (the one time it is compared):
    # an order taken before a pending offset is lower than the pending one's anyway, so the plain commits
    # of partitions nobody commits transactionally cost no entry (a 3-tuple and an int, ~150 bytes, per
    # committed offset: a quarter of what a million stored offsets held).
    offset_order: dict[tuple[str, str, int], int] = field(default_factory=dict)
    next_offset_order: int = 0
    # One (topic, partition) tuple per partition that offsets are stored for, shared by every group's
    # ``offsets`` dict: 10,000 groups committing the same 100 partitions hold 100 tuples, not a million
    # (~64 bytes and a topic name each). Only a memory saving: cleared when it grows past its bound.
    topic_partitions: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)

    # Per-group configs (KIP-848, Kafka's GroupConfigManager): an object answering
    # consumer_session_timeout_ms / consumer_heartbeat_interval_ms / consumer_assignment_interval_ms per group
    # id (dataplane/group_configs.GroupConfigSource); None: the broker's settings for every group.
    group_configs: Any = None

    info_logged: bool = field(init=False, default=True)
    """Whether ``log`` writes INFO events, asked once (a structlog logger's level is fixed when it is bound):
    the classic group's state changes and member events are INFO, and a call whose level is filtered out
    still builds its keyword arguments and calls the no-op (three transitions and three joins per group
    formed)."""

    def __post_init__(self) -> None:
        enabled = getattr(self.log, "is_enabled_for", None)
        self.info_logged = True if enabled is None else bool(enabled(logging.INFO))

    def consumer_session_timeout_ms(self, group_id: str) -> int:
        source = self.group_configs
        if source is None:
            return self.config.group_consumer_session_timeout_ms
        return source.consumer_session_timeout_ms(group_id)

    def consumer_heartbeat_interval_ms(self, group_id: str) -> int:
        source = self.group_configs
        if source is None:
            return self.config.group_consumer_heartbeat_interval_ms
        return source.consumer_heartbeat_interval_ms(group_id)

    def consumer_assignment_interval_ms(self, group_id: str) -> int:
        source = self.group_configs
        if source is None:
            return self.config.group_consumer_assignment_interval_ms
        return source.consumer_assignment_interval_ms(group_id)

    def group_config(self, group_id: str, name: str) -> Any:
        """The effective value of any per-group config for ``group_id`` (share.* included: the share-group
        settings read it), or None without a source."""
        source = self.group_configs
        return None if source is None else source.value(group_id, name)

    def availability_error(self) -> ErrorCode | None:
        """Why this shard cannot answer for its groups right now, if it cannot."""
        return availability_error(self.loading, self.unavailable)

    def request_error(self, group_id: str) -> ErrorCode | None:
        """Every group request (Kafka's validateGroupStatus): an empty group id is invalid, a shard still
        replaying its log answers COORDINATOR_LOAD_IN_PROGRESS (the client retries), and a shard whose log
        could not be loaded answers COORDINATOR_NOT_AVAILABLE (the client looks for its coordinator again)."""
        if not group_id:
            return ErrorCode.invalid_group_id
        if not self.loading and self.unavailable is None:  # every request of a serving shard: no further call
            return None
        return self.availability_error()

    def topic_partition(self, topic: str, partition: int) -> tuple[str, int]:
        """The shared (topic, partition) tuple to key a stored offset with (see ``topic_partitions``)."""
        key = (topic, partition)
        shared = self.topic_partitions.get(key)
        if shared is None:
            if len(self.topic_partitions) >= TOPIC_PARTITIONS_CACHED:
                self.topic_partitions.clear()
            self.topic_partitions[key] = shared = key
        return shared

    def take_offset_order(self) -> int:
        self.next_offset_order += 1
        return self.next_offset_order

    def create_group(self, group_id: str, now: int) -> ClassicGroup:
        group = ClassicGroup(group_id=group_id, current_state_timestamp=now)
        self.groups[group_id] = group
        return group

    def on_transition(self, group: ClassicGroup, old: GroupState, new: GroupState, reason: str) -> None:
        # ``_value_``, not ``.value``: Enum's value is a Python-level descriptor (two calls a read), and every
        # group of three makes three transitions here
        old_name, new_name = old._value_, new._value_
        if self.info_logged:
            self.log.info(
                "group state change",
                group_id=group.group_id,
                old=old_name,
                new=new_name,
                generation=group.generation,
                members=len(group.members),
                reason=reason,
            )
        self.observer.on_state_change(group.group_id, old_name, new_name, reason)

    def log_member(self, group: ClassicGroup, member_id: str, event: str, reason: str) -> None:
        if self.info_logged:
            self.log.info(_MEMBER_EVENTS.get(event) or f"member {event}", group_id=group.group_id,
                          member_id=member_id, reason=reason)
        observer = self.observer
        if event == "joined":
            observer.on_member_joined(group.group_id, member_id, reason)
        elif event == "left":
            observer.on_member_left(group.group_id, member_id, reason)
        else:
            observer.on_member_expired(group.group_id, member_id, reason)
