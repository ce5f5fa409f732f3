"""Share sessions (Kafka's ShareSessionCache, KIP-932): the share partitions a member fetches, kept between
its ShareFetch requests so that each request names only what changed, and the epoch that orders them.

Epoch 0 opens a session (replacing the member's previous one), -1 closes it, any other must be the
session's current epoch (INVALID_SHARE_SESSION_EPOCH) of a session that exists (SHARE_SESSION_NOT_FOUND);
each accepted request moves the epoch on. At most ``group.share.max.share.sessions`` sessions are kept: a
new one past that is refused with SHARE_SESSION_LIMIT_REACHED, as Kafka 4.3 does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_EPOCH = 2**31 - 1

TopicIdPartition = tuple[uuid.UUID, int]


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= MAX_EPOCH else epoch + 1


@dataclass
class ShareSession:
    """A share session (KIP-932): its member, epoch, connection and the partitions it fetches."""
    group_id: str
    member_id: str
    epoch: int
    connection_id: int
    partitions: dict[TopicIdPartition, None] = field(default_factory=dict)  # ordered set


@frozen_dataclass
class SessionUse:
    """What one request does to its session: the error (else None), the session, and whether it is the final
    request (the session is gone after it)."""

    error: ErrorCode | None
    session: ShareSession | None = None
    final: bool = False


class ShareSessionCache:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self.created = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self.sessions)

    def for_fetch(self, group_id: str, member_id: str, epoch: int, connection_id: int,
                  add: list[TopicIdPartition], forget: list[TopicIdPartition]) -> SessionUse:
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            previous = self.sessions.pop(key, None)
            if previous is None and len(self.sessions) >= self.max_sessions:
                self.refused += 1
                return SessionUse(ErrorCode.share_session_limit_reached)
            session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), connection_id)
            for tp in add:
                session.partitions[tp] = None
            self.sessions[key] = session
            self.created += 1
            return SessionUse(None, session)
        use = self._existing(key, epoch)
        if use.error is not None or use.final:
            return use
        session = use.session
        assert session is not None
        for tp in forget:
            session.partitions.pop(tp, None)
        for tp in add:
            session.partitions[tp] = None
        session.epoch = next_epoch(session.epoch)
        session.connection_id = connection_id
        return SessionUse(None, session)

    def for_acknowledge(self, group_id: str, member_id: str, epoch: int) -> SessionUse:
        """ShareAcknowledge may not open a session (epoch 0 is INVALID_SHARE_SESSION_EPOCH)."""
        if epoch == INITIAL_EPOCH:
            return SessionUse(ErrorCode.invalid_share_session_epoch)
        use = self._existing((group_id, member_id), epoch)
        if use.error is None and not use.final:
            assert use.session is not None
            use.session.epoch = next_epoch(use.session.epoch)
        return use

    def _existing(self, key: tuple[str, str], epoch: int) -> SessionUse:
        """A request on an open session (any epoch but the initial one), by ShareFetch and ShareAcknowledge alike:
        SHARE_SESSION_NOT_FOUND without one, the session closed by the final epoch, INVALID_SHARE_SESSION_EPOCH
        for any epoch but the expected one; else the session, for the caller to advance its epoch."""
        session = self.sessions.get(key)
        if session is None:
            return SessionUse(ErrorCode.share_session_not_found)
        if epoch == FINAL_EPOCH:
            del self.sessions[key]
            return SessionUse(None, session, final=True)
        if epoch != session.epoch:
            return SessionUse(ErrorCode.invalid_share_session_epoch)
        return SessionUse(None, session)

    def remove_member(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)

    def on_connection_closed(self, connection_id: int) -> list[ShareSession]:
        """Kafka 4.1+ drops a member's share session when its connection closes."""
        gone = [s for s in self.sessions.values() if s.connection_id == connection_id]
        for s in gone:
            del self.sessions[(s.group_id, s.member_id)]
        return gone
