"""Deadlines that free a connection its client no longer uses: Kafka's ``connections.max.idle.ms`` and a
deadline for a request frame that never completes (``socket.request.read.timeout.ms``).

Without them a connection costs its holder nothing to keep: idle sockets, or a slow-loris client that
trickles one byte of a frame now and then, fill ``max.connections`` until no client can connect. Like
Kafka's Selector, connections are kept in least-recently-active order, so a sweep looks only at those
whose deadline has passed and stops at the first that has not: an O(1) touch per read, not a timer per
connection.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from typing import Hashable, Protocol


class Expiry(enum.Enum):
    IDLE = "connections.max.idle.ms"
    INCOMPLETE_REQUEST = "socket.request.read.timeout.ms"


class Watched(Hashable, Protocol):
    @property
    def owed(self) -> int: ...           # answers the broker still owes: the client is waiting, not idle
    @property
    def reading_paused(self) -> bool: ...  # back-pressure: the broker, not the client, holds up the frame


class ConnectionDeadlines:
    def __init__(self, idle_ms: int, request_read_ms: int) -> None:
        self.idle_s = idle_ms / 1000
        self.request_read_s = request_read_ms / 1000
        self._last_active: OrderedDict[Watched, float] = OrderedDict()  # oldest activity first
        self._frame_started: OrderedDict[Watched, float] = OrderedDict()  # oldest incomplete frame first

    def active(self, conn: Watched, now: float) -> None:
        """Bytes moved in either direction."""
        self._last_active[conn] = now
        self._last_active.move_to_end(conn)

    def frame_incomplete(self, conn: Watched, now: float) -> None:
        """Part of a frame is buffered; its deadline runs from the first time this is said."""
        if conn not in self._frame_started:
            self._frame_started[conn] = now

    def frame_complete(self, conn: Watched) -> None:
        self._frame_started.pop(conn, None)

    def forget(self, conn: Watched) -> None:
        self._last_active.pop(conn, None)
        self._frame_started.pop(conn, None)

    def expired(self, now: float) -> list[tuple[Watched, Expiry]]:
        """Connections past a deadline, each once, oldest first. They stay watched until forgotten."""
        out: list[tuple[Watched, Expiry]] = []
        for conn, started in self._frame_started.items():
            if now - started < self.request_read_s:
                break
            if not conn.reading_paused:
                out.append((conn, Expiry.INCOMPLETE_REQUEST))
        for conn, last in self._last_active.items():
            if now - last < self.idle_s:
                break
            if conn.owed == 0 and conn not in self._frame_started:
                out.append((conn, Expiry.IDLE))
        return out

    @property
    def sweep_interval_s(self) -> float:
        """A quarter of the shorter deadline, within 10 ms and 1 s: closes are at most that late."""
        return min(1.0, max(0.01, min(self.idle_s, self.request_read_s) / 4))

    def __len__(self) -> int:
        return len(self._last_active)
