"""The listening socket and the set of live connections."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import structlog

from ..config import BrokerConfig
from .connection import KafkaConnection
from .dispatch import Dispatcher

log = structlog.get_logger("groupcoord.server")


class ConnectionObserver(Protocol):
    def connection_opened(self) -> None: ...
    def connection_closed(self) -> None: ...


class KafkaServer:
    def __init__(self, config: BrokerConfig, dispatcher: Dispatcher, observer: Any = None) -> None:
        self.config = config
        self.dispatcher = dispatcher
        self.observer = observer
        self.connections: set[KafkaConnection] = set()
        self._server: asyncio.base_events.Server | None = None
        self.total_bytes_sent = 0

    async def start(self, serve: bool = True) -> tuple[str, int]:
        """Bind (and with `serve`, accept). Binding first lets the broker learn a port-0 address before
        any client can ask for it; `serve()` then opens the door once every handler is registered."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: KafkaConnection(self),
            host=self.config.listen_host,
            port=self.config.listen_port,
            reuse_address=True,
            backlog=1024,
            start_serving=serve,
        )
        sock = self._server.sockets[0]
        host, port = sock.getsockname()[:2]
        return host, port

    async def serve(self) -> None:
        assert self._server is not None
        await self._server.start_serving()

    def accept(self, conn: KafkaConnection) -> bool:
        if len(self.connections) >= self.config.max_connections:
            return False
        self.connections.add(conn)
        if self.observer is not None:
            self.observer.connection_opened()
        return True

    def forget(self, conn: KafkaConnection) -> None:
        if conn in self.connections:
            self.connections.discard(conn)
            if self.observer is not None:
                self.observer.connection_closed()

    def bytes_sent(self, n: int) -> None:
        self.total_bytes_sent += n

    async def stop(self, drain_timeout: float = 5.0) -> None:
        """Stop accepting, let in-flight requests finish (bounded), close every connection."""
        if self._server is not None:
            self._server.close()
        conns = list(self.connections)
        if conns:
            await asyncio.gather(*(c.drain(drain_timeout) for c in conns), return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
