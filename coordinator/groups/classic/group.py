"""A classic group's data: members, generation, protocol, leader, committed offsets.

Only bookkeeping that must stay consistent lives here (counters of members
awaiting a join, protocol support counts, the static-member index); the rules
about *when* these change live in the rebalance/join/sync/... modules.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from groupcoord.coordinator.groups.classic.member import ClassicMember
from groupcoord.coordinator.groups.classic.protocol_vote import select_protocol, supports_protocols
from groupcoord.coordinator.groups.classic.shared_sets import shared_frozenset
from groupcoord.coordinator.groups.classic.state import EMPTY, GroupState, check_transition
from groupcoord.coordinator.groups.offsets_records import OffsetCommitValue


@dataclass(slots=True, eq=False)
class ClassicGroup:
    """A classic group's live state: its state machine, protocol, generation, leader, members and pending joins."""
    group_id: str
    state: GroupState = EMPTY
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation: int = 0
    leader_id: str | None = None
    current_state_timestamp: int = -1
    members: dict[str, ClassicMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    pending_members: set[str] = field(default_factory=set)  # told MEMBER_ID_REQUIRED, not yet rejoined
    pending_sync: set[str] = field(default_factory=set)  # joined this generation, not yet synced
    supported: Counter = field(default_factory=Counter)  # protocol name -> members supporting it
    awaiting_join: int = 0
    # Initial delayed join (empty group): did a member arrive during the current delay?
    new_member_added: bool = False
    rebalance_started_ms: int = 0
    rebalance_reason: str = ""
    join_kind: str | None = None  # which delayed join is pending: "initial" (empty group) or "normal"
    initial_remaining_ms: int = 0
    subscribed: frozenset[str] | None = None  # topics of the current generation; None = unknown
    offsets: dict[tuple[str, int], OffsetCommitValue] = field(default_factory=dict)

    # ------------------------------------------------------------------ queries

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def is_static_member_fenced(self, instance_id: str | None, member_id: str) -> bool:
        """A known instance id presented with a member id that is no longer its own."""
        current = self.static_member_id(instance_id)
        return current is not None and current != member_id

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    @property
    def size(self) -> int:
        return len(self.members)

    def has_all_members_joined(self) -> bool:
        return self.awaiting_join == len(self.members) and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        longest = None  # max(..., default=0), as a loop: no generator (every rebalance asks, twice)
        for member in self.members.values():
            if longest is None or member.rebalance_timeout_ms > longest:
                longest = member.rebalance_timeout_ms
        return 0 if longest is None else longest

    def supports(self, protocol_type: str, names: frozenset[str]) -> bool:
        return supports_protocols(self.protocol_type, len(self.members), self.supported, protocol_type, names)

    def select_protocol(self) -> str:
        return select_protocol(self.members.values(), self.supported)

    def not_yet_rejoined(self) -> list[ClassicMember]:
        return [m for m in self.members.values() if m.join_token is None]  # not is_awaiting_join

    def current_member_metadata(self) -> list[dict]:
        return [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "metadata": m.metadata(self.protocol_name)}
            for m in self.members.values()
        ]

    def is_subscribed_to(self, topic: str) -> bool:
        return self.subscribed is not None and topic in self.subscribed

    # ------------------------------------------------------------------ changes

    def transition(self, target: GroupState, now_ms: int) -> GroupState:
        check_transition(self.state, target)
        old, self.state = self.state, target
        self.current_state_timestamp = now_ms
        return old

    def add(self, member: ClassicMember, join_token=None, join_version: int = 0) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        self.supported.update(member.protocol_names)
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        self.pending_members.discard(member.member_id)
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.set_join_token(member, join_token, join_version)

    def remove(self, member_id: str) -> ClassicMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.supported.subtract(member.protocol_names)
        for name in member.protocol_names:
            if self.supported[name] <= 0:
                del self.supported[name]
        if member.is_awaiting_join:
            self.awaiting_join -= 1
        if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        self.pending_sync.discard(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def set_join_token(self, member: ClassicMember, token, version: int = 0) -> None:
        parked = member.join_token is not None  # member.is_awaiting_join, without the property's call
        if token is not None and not parked:
            self.awaiting_join += 1
        elif token is None and parked:
            self.awaiting_join -= 1
        member.join_token = token
        member.join_version = version

    def update_member(self, member: ClassicMember, protocols, rebalance_timeout_ms: int, session_timeout_ms: int) -> None:
        self.supported.subtract(member.protocol_names)
        member.set_protocols(protocols)
        self.supported.update(member.protocol_names)
        for name in [n for n, c in self.supported.items() if c <= 0]:
            del self.supported[name]
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> ClassicMember:
        """Give a rejoining static instance a new member id, keeping its place, assignment and leadership."""
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        self.static_members[instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        return member

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick any member that did; False if nobody rejoined."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """Union of the members' subscriptions under the chosen protocol; None if any is undecodable. (The consumer
        protocol's reader and kio's schemas are imported by the first group that has members, not at start-up.)"""
        from groupcoord.protocol.consumer_protocol import subscribed_topics

        if self.protocol_type is None:
            return None
        if not self.members:
            return frozenset()
        topics: set[str] = set()
        for member in self.members.values():
            found = subscribed_topics(self.protocol_type, member.metadata(self.protocol_name))
            if found is None:
                return None
            topics |= found
        return shared_frozenset(topics)

    def reset_to_empty_shell(self) -> None:
        """What is left of a group after its metadata tombstone while offsets survive: a standalone group."""
        self.state = EMPTY
        self.members.clear()
        self.static_members.clear()
        self.pending_members.clear()
        self.pending_sync.clear()
        self.supported.clear()
        self.awaiting_join = 0
        self.protocol_type = None
        self.protocol_name = None
        self.leader_id = None
        self.generation = 0
        self.subscribed = None
