"""A minimal asyncio Kafka connection for benches: pipelined requests, answers matched in order."""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from typing import Any

from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.registry import is_flexible, response_reader

from .requests import encode


class AioConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.waiting: deque[tuple[int, int, asyncio.Future[Any]]] = deque()
        self.correlation = 0
        self.pump = asyncio.get_running_loop().create_task(self._pump())

    @classmethod
    async def open(cls, bootstrap: str) -> "AioConnection":
        host, _, port = bootstrap.rpartition(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> asyncio.Future[Any]:
        self.correlation += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append((api_key, version, fut))
        self.writer.write(encode(api_key, version, body, self.correlation))
        return fut

    async def _pump(self) -> None:
        try:
            while True:
                size = struct.unpack(">i", await self.reader.readexactly(4))[0]
                frame = await self.reader.readexactly(size)
                api_key, version, fut = self.waiting.popleft()
                _, pos = parse_response_header(frame, api_key, is_flexible(api_key, version))
                if not fut.done():
                    fut.set_result(response_reader(api_key, version)(frame, pos)[0])
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            while self.waiting:
                fut = self.waiting.popleft()[2]
                if not fut.done():
                    fut.set_exception(ConnectionError(str(exc)))

    async def close(self) -> None:
        """Waits for the reading task to end too: a task merely cancelled is still pending when the loop closes."""
        self.pump.cancel()
        self.writer.close()
        try:
            await self.pump
        except asyncio.CancelledError:
            pass
