"""Which protocol (assignor) a classic group uses: only ones every member supports, chosen by vote."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from groupcoord.coordinator.groups.classic.member import ClassicMember


def candidate_protocols(supported: Counter, num_members: int) -> set[str]:
    """Protocols supported by every member (``supported`` counts members per protocol)."""
    return {name for name, count in supported.items() if count == num_members}


def member_vote(member: ClassicMember, candidates: set[str]) -> str:
    """A member votes for its most preferred protocol among the candidates (its list is in preference order)."""
    for name, _ in member.protocols:
        if name in candidates:
            return name
    raise ValueError(f"member {member.member_id} supports none of {sorted(candidates)}")


def select_protocol(members: Iterable[ClassicMember], supported: Counter) -> str:
    """The protocol with most votes.

    Kafka breaks ties by hash-map iteration order (effectively arbitrary); here a
    tie goes to the protocol ranked highest by the earliest member, so the choice
    is deterministic and reproducible after a restart.
    """
    members = list(members)
    candidates = candidate_protocols(supported, len(members))
    if not candidates:
        raise ValueError("no protocol is supported by every member")
    if len(candidates) == 1:  # every member votes for it (it supports it): the vote's own answer, without one
        return next(iter(candidates))
    votes = Counter(member_vote(m, candidates) for m in members)
    best = max(votes.values())
    for name, _ in members[0].protocols:
        if votes.get(name) == best:
            return name
    return min(name for name, count in votes.items() if count == best)


def supports_protocols(
    group_protocol_type: str | None,
    num_members: int,
    supported: Counter,
    protocol_type: str,
    names: frozenset[str],
) -> bool:
    """Whether a member with this protocol type and protocol names may join the group (Kafka's supportsProtocols)."""
    if num_members == 0:
        return bool(protocol_type) and bool(names)
    return group_protocol_type == protocol_type and any(supported.get(n, 0) == num_members for n in names)
