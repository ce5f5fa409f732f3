"""The listening sockets (one per listener) and the set of live connections, bounded as Kafka bounds them.

A connection is admitted only under ``max.connections`` and ``max.connections.per.ip`` (refused ones are
closed at once, before any transport is made), and freed again by ``connections.max.idle.ms`` or by
``socket.request.read.timeout.ms`` when its client stops using it. Refusals, expiries and descriptor
exhaustion are logged once per burst and counted by the observer (Prometheus metrics in the broker).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import errno
import resource
import socket
import time
from collections import Counter
from typing import Any, Callable, Protocol

import structlog

from ..config import BrokerConfig, per_host_limits
from .acceptor import Acceptor, listening_socket
from .bursts import BurstLog
from .connection import KafkaConnection
from .deadlines import ConnectionDeadlines, Expiry
from .dispatch import Dispatcher
from .listener_security import ListenerSecurity
from .listeners import Listener, configured_listeners

log = structlog.get_logger("groupcoord.server")

BACKLOG = 1024


class Refusal(enum.StrEnum):
    """Why a connection was closed at accept: the Kafka setting whose limit it hit."""
    MAX_CONNECTIONS = "max.connections"
    MAX_CONNECTIONS_PER_IP = "max.connections.per.ip"


class ConnectionObserver(Protocol):
    def connection_opened(self) -> None: ...
    def connection_closed(self) -> None: ...
    def connection_refused(self, reason: str) -> None: ...
    def connection_expired(self, reason: str) -> None: ...
    def accept_failed(self, error: str) -> None: ...


class _NoObserver:
    def connection_opened(self) -> None: ...
    def connection_closed(self) -> None: ...
    def connection_refused(self, reason: str) -> None: ...
    def connection_expired(self, reason: str) -> None: ...
    def accept_failed(self, error: str) -> None: ...


class KafkaServer:
    def __init__(self, config: BrokerConfig, dispatcher: Dispatcher, observer: Any = None,
                 security: list[ListenerSecurity] | None = None) -> None:
        self.config = config
        self.dispatcher = dispatcher
        # One entry per listener; without any, one PLAINTEXT listener on config.listen (tests, embedding).
        self.security = security or [ListenerSecurity(configured_listeners(config)[0])]
        self.listeners: list[Listener] = [s.listener for s in self.security]
        self.observer: ConnectionObserver = observer if observer is not None else _NoObserver()
        self.connections: set[KafkaConnection] = set()
        self.deadlines = ConnectionDeadlines(config.connections_max_idle_ms, config.socket_request_read_timeout_ms)
        self.bursts = BurstLog(log)
        self._admitted = 0                    # sockets counted against the limits, handshakes included
        self._per_ip: Counter[str] = Counter()
        self._overrides: dict[str, int] | None = None
        self._acceptors: list[Acceptor] = []
        self._handshakes: set[asyncio.Task[Any]] = set()
        self._sweep: asyncio.TimerHandle | None = None
        self.close_listeners: list[Callable[[int], None]] = []
        """Told the id of every connection that closes (share sessions end with their connection, KIP-932)."""
        # Client quotas (coordinator/quotas): a Throttler while any client quota exists, else None — the
        # connections' one check per request; the per-IP connection rate while an ip quota exists.
        self.quotas: Any = None
        self.connection_quotas: Any = None

    async def start(self, serve: bool = True) -> tuple[str, int]:
        """Bind every listener (and with `serve`, accept). Binding first lets the broker learn a port-0
        address before any client can ask for it; `serve()` then opens the door once every handler is
        registered. Returns the first listener's bound address."""
        first: tuple[str, int] | None = None
        try:
            for i, security in enumerate(self.security):
                listener = security.listener
                sock = listening_socket(listener.host, listener.port, BACKLOG)
                on_socket = (lambda s, ip, sec=security: self._on_socket(s, ip, sec))
                self._acceptors.append(Acceptor(sock, on_socket, self._out_of_descriptors, self._descriptors_back))
                host, port = sock.getsockname()[:2]
                security.listener = listener.bound(port)
                self.listeners[i] = security.listener
                if first is None:
                    first = (host, port)
        except BaseException:
            for acceptor in self._acceptors:
                acceptor.close()
            self._acceptors = []
            raise
        if serve:
            await self.serve()
        assert first is not None
        return first

    async def serve(self) -> None:
        assert self._acceptors
        for acceptor in self._acceptors:
            acceptor.start()
        self._schedule_sweep()

    # -- admission ------------------------------------------------------------------------------
    def _refusal(self, ip: str) -> Refusal | None:
        if self._admitted >= self.config.max_connections:
            return Refusal.MAX_CONNECTIONS
        if self._per_ip[ip] >= self.limit_for(ip):
            return Refusal.MAX_CONNECTIONS_PER_IP
        return None

    def limit_for(self, ip: str) -> int:
        """max.connections.per.ip, or the address's max.connections.per.ip.overrides entry (host names in
        the overrides resolved once, as Kafka resolves them when the setting is read)."""
        overrides = self._overrides
        if overrides is None:
            overrides = self._overrides = _resolve_overrides(
                per_host_limits(getattr(self.config, "max_connections_per_ip_overrides", "")))
        return overrides.get(ip, self.config.max_connections_per_ip)

    def _on_socket(self, sock: socket.socket, ip: str, security: ListenerSecurity | None = None) -> None:
        refusal = self._refusal(ip)
        if refusal is not None:
            sock.close()
            self.observer.connection_refused(refusal.value)
            key = (refusal, ip) if refusal is Refusal.MAX_CONNECTIONS_PER_IP else refusal
            limit = (self.limit_for(ip) if refusal is Refusal.MAX_CONNECTIONS_PER_IP
                     else self.config.max_connections)
            self.bursts.event(key, f"connection refused: {refusal} reached", peer=ip, limit=limit)
            return
        if self.connection_quotas is not None:
            hold = self.connection_quotas.admit(ip)
            if hold > 0:
                # ConnectionQuotas: past the address's connection_creation_rate the socket is kept unread for
                # the throttle time, then closed (Kafka's DelayedCloseSocket)
                self.observer.connection_refused("connection_creation_rate")
                self.bursts.event(("rate", ip), "connection refused: connection_creation_rate reached", peer=ip,
                                  throttle_ms=hold)
                asyncio.get_running_loop().call_later(hold / 1000.0, sock.close)
                return
        self._admitted += 1
        self._per_ip[ip] += 1
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        security = security or self.security[0]
        conn = KafkaConnection(self, ip, security if security.secured else None, security.name)
        loop = asyncio.get_running_loop()
        if security.ssl_context is not None:
            # The TLS handshake is bounded: a client that never finishes it (a plaintext client on a TLS port
            # sends a Kafka frame, which is not a ClientHello, or nothing at all) is dropped with one log line.
            setup = loop.connect_accepted_socket(lambda: conn, sock, ssl=security.ssl_context,
                                                 ssl_handshake_timeout=security.auth_timeout_s)
        else:
            setup = loop.connect_accepted_socket(lambda: conn, sock)
        task = loop.create_task(setup)
        self._handshakes.add(task)
        task.add_done_callback(lambda t, c=conn, s=sock: self._handshake_done(t, c, s))

    def _handshake_done(self, task: asyncio.Task[Any], conn: KafkaConnection, sock: socket.socket) -> None:
        self._handshakes.discard(task)
        if task.cancelled() or task.exception() is not None:
            error = None if task.cancelled() else task.exception()
            log.warning("connection setup failed", peer=conn.peer, listener=conn.listener,
                        error=None if error is None else (str(error) or type(error).__name__))
            if conn.security is not None and conn.security.ssl_context is not None:
                self.observer_authentication(conn.listener, "SSL", False)
            sock.close()
            self.forget(conn)

    def accept(self, conn: KafkaConnection) -> bool:
        """The connection's transport is made: it is live. (Admission was decided at accept.)"""
        if not conn.admitted:
            return False
        self.connections.add(conn)
        self.deadlines.active(conn, time.monotonic())
        self.observer.connection_opened()
        return True

    def forget(self, conn: KafkaConnection) -> None:
        if conn.admitted:
            conn.admitted = False
            self._admitted -= 1
            self._per_ip[conn.peer] -= 1
            if self._per_ip[conn.peer] <= 0:
                del self._per_ip[conn.peer]
        self.deadlines.forget(conn)
        if conn in self.connections:
            self.connections.discard(conn)
            self.observer.connection_closed()
            for listener in self.close_listeners:
                listener(conn.id)

    # -- descriptors ----------------------------------------------------------------------------
    def _out_of_descriptors(self, exc: OSError) -> None:
        name = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        self.observer.accept_failed(name)
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.bursts.event("descriptors", "cannot accept: out of file descriptors; new connections wait in the backlog",
                          error=name, connections=len(self.connections), nofile_limit=soft)

    def _descriptors_back(self) -> None:
        log.info("accepting again: file descriptors freed", connections=len(self.connections))
        self.bursts.end("descriptors")

    # -- deadlines ------------------------------------------------------------------------------
    def _schedule_sweep(self) -> None:
        self._sweep = asyncio.get_running_loop().call_later(self.deadlines.sweep_interval_s, self._sweep_deadlines)

    def _sweep_deadlines(self) -> None:
        expired = self.deadlines.expired(time.monotonic())
        closed: Counter[Expiry] = Counter()
        for conn, why in expired:
            conn.expire(why.value)
            self.deadlines.forget(conn)
            self.observer.connection_expired(why.value)
            closed[why] += 1
        for why, count in closed.items():
            log.info("closed connections past their deadline", deadline=why.value, connections=count)
        self.bursts.end_quiet()
        self._schedule_sweep()

    def observer_authentication(self, listener: str, mechanism: str, succeeded: bool) -> None:
        method = getattr(self.observer, "authentication", None)
        if method is not None:
            method(listener, mechanism, succeeded)

    async def stop(self, drain_timeout: float = 5.0) -> None:
        """Stop accepting, let in-flight requests finish (bounded), close every connection."""
        for acceptor in self._acceptors:
            acceptor.close()
        self._acceptors = []
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        if self._handshakes:
            await asyncio.wait(set(self._handshakes), timeout=drain_timeout)
        conns = list(self.connections)
        if conns:
            await asyncio.gather(*(c.drain(drain_timeout) for c in conns), return_exceptions=True)



def _resolve_overrides(overrides: dict[str, int]) -> dict[str, int]:
    resolved: dict[str, int] = {}
    for host, limit in overrides.items():
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
        except OSError:
            addresses = {host}
        for address in addresses | {host}:
            resolved[address] = limit
    return resolved
