"""A minimal asyncio Kafka connection for benches: pipelined requests, answers matched in order.

An asyncio Protocol rather than a StreamReader and a reading task: the frames of each read are cut out and
answered in ``data_received`` itself, with no task wake-up and two ``readexactly`` calls per answer (the
group bench sends some 25,000 small requests for 2,000 groups, and the client's CPU counts in its figure
as much as the broker's on a machine whose cores they share)."""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from typing import Any

from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.registry import is_flexible, response_reader

from .requests import encode

_FLEXIBLE_HEAD = struct.Struct(">ihhi")  # size, api key, api version, correlation id
_CLIENT_ID = b"\x00\x05bench\x00"  # request header v2: client id "bench", no tagged fields
_FLEXIBLE_HEAD_BYTES = _FLEXIBLE_HEAD.size - 4 + len(_CLIENT_ID)
_SIZE = struct.Struct(">i")


class _Reading(asyncio.Protocol):
    def __init__(self) -> None:
        self.conn: AioConnection | None = None
        self.buffer = bytearray()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        size_of = _SIZE.unpack_from
        pos, end = 0, len(buffer)
        conn = self.conn
        while end - pos >= 4:
            size = size_of(buffer, pos)[0]
            if end - pos - 4 < size:
                break
            frame = bytes(buffer[pos + 4:pos + 4 + size])
            pos += 4 + size
            if conn is not None:
                conn._answer(frame)
        if pos:
            del buffer[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            self.conn._lost(exc)
        if not self.closed.done():
            self.closed.set_result(None)


class AioConnection:
    def __init__(self, transport: asyncio.Transport, reading: _Reading) -> None:
        self.transport = transport
        self._reading = reading
        reading.conn = self
        self.waiting: deque[tuple[int, int, asyncio.Future[Any]]] = deque()
        self.correlation = 0
        self._closing = False

    @classmethod
    async def open(cls, bootstrap: str) -> "AioConnection":
        host, _, port = bootstrap.rpartition(":")
        transport, reading = await asyncio.get_running_loop().create_connection(_Reading, host, int(port))
        return cls(transport, reading)  # type: ignore[arg-type]

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> asyncio.Future[Any]:
        self.correlation += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append((api_key, version, fut))
        self.transport.write(encode(api_key, version, body, self.correlation))
        return fut

    def send_body(self, api_key: int, version: int, body: bytes) -> asyncio.Future[Any]:
        """As `send`, with the request body already encoded (a flexible version: header v2, client id
        "bench", as `encode` writes it), for the benches' hottest requests: kio's writer was most of a
        small request's client-side cost. The answer is read as `send`'s is."""
        self.correlation += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append((api_key, version, fut))
        self.transport.write(b"".join((_FLEXIBLE_HEAD.pack(len(body) + _FLEXIBLE_HEAD_BYTES, api_key, version,
                                                           self.correlation), _CLIENT_ID, body)))
        return fut

    def _answer(self, frame: bytes) -> None:
        if not self.waiting:
            return
        api_key, version, fut = self.waiting.popleft()
        if fut.done():
            return
        try:
            _, pos = parse_response_header(frame, api_key, is_flexible(api_key, version))
            fut.set_result(response_reader(api_key, version)(frame, pos)[0])
        except Exception as exc:  # an answer that does not read: its request fails, not the connection
            fut.set_exception(exc)

    def _lost(self, exc: Exception | None) -> None:
        """The server closed the connection (or it failed): every request still waiting fails. One closed
        by `close` leaves them as they are, as the reading task's cancellation did."""
        if self._closing:
            return
        while self.waiting:
            fut = self.waiting.popleft()[2]
            if not fut.done():
                fut.set_exception(ConnectionError(str(exc) if exc else "connection closed by the server"))

    async def close(self) -> None:
        """Returns once the connection is closed (the transport's connection_lost has run)."""
        self._closing = True
        self.transport.close()
        await self._reading.closed
