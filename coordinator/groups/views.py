"""Read-only snapshots of groups for operations and metrics (no live objects leak out of a shard)."""

from __future__ import annotations

from groupcoord.coordinator.groups.classic.group import ClassicGroup
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup, state_of
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class MemberView:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: bytes


@frozen_dataclass
class GroupView:
    group_id: str
    state: str  # Kafka's spelling: "Empty", "PreparingRebalance", ...
    protocol_type: str | None
    protocol: str | None
    generation: int
    leader: str | None
    members: tuple[MemberView, ...]
    num_offsets: int


def group_view(group: ClassicGroup) -> GroupView:
    """Safe to call from another thread (a metrics scrape): containers are copied in one step before reading."""
    members = tuple(group.members.values())
    return GroupView(
        group_id=group.group_id,
        state=group.state.value,
        protocol_type=group.protocol_type,
        protocol=group.protocol_name,
        generation=group.generation,
        leader=group.leader_id,
        members=tuple(
            MemberView(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.assignment) for m in members
        ),
        num_offsets=len(group.offsets),
    )


def consumer_group_view(group: ConsumerGroup) -> GroupView:
    """A KIP-848 group in the same shape: the group epoch stands for the generation; there is no leader, and
    assignments live in the coordinator as topic ids, not as the classic protocol's opaque bytes."""
    members = tuple(group.members.values())
    return GroupView(
        group_id=group.group_id,
        state=state_of(group.group_epoch, group.assignment_epoch, members).value,
        protocol_type="consumer",
        protocol=None,
        generation=group.group_epoch,
        leader=None,
        members=tuple(MemberView(m.member_id, m.instance_id, m.client_id, m.client_host, b"") for m in members),
        num_offsets=len(group.offsets),
    )


def share_group_view(group: ShareGroup) -> GroupView:
    """A KIP-932 share group in the same shape (protocol type "share"; no offsets: its progress lives in the
    share coordinator's state)."""
    members = tuple(group.members.values())
    return GroupView(
        group_id=group.group_id,
        state="Stable" if members else "Empty",
        protocol_type="share",
        protocol=None,
        generation=group.group_epoch,
        leader=None,
        members=tuple(MemberView(m.member_id, None, m.client_id, m.client_host, b"") for m in members),
        num_offsets=0,
    )
