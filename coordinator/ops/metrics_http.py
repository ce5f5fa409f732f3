"""A minimal HTTP/1.1 endpoint for Prometheus scrapes, served on the broker's own event loop.

prometheus-client's start_http_server runs in a thread; serving from the loop instead means the scrape-time
collectors read group and log state on the thread that mutates it, with no locks and no torn reads.
One request per connection, GET or HEAD of /metrics (or /) or /health, anything else is 404/405.

``/health`` answers 200 while the broker can do its job and 503 while it cannot (writes failing, partitions
offline, group shards unavailable), with the problems as JSON: a liveness check that only asks ApiVersions
keeps succeeding through a full disk, this one does not. ``groupcoord health`` reads it.

The server starts with the broker, before it listens; prometheus-client (the scrape's content type and text
format) is imported by the first scrape (coordinator/metric_families.py says why).
"""

from __future__ import annotations

import asyncio
import json
from typing import Callable

MAX_REQUEST_HEAD = 16 * 1024
READ_TIMEOUT_S = 10.0
METRICS_PATHS = ("/metrics", "/")
HEALTH_PATH = "/health"


class MetricsHttpServer:
    def __init__(self, render: Callable[[], bytes], health: Callable[[], dict] | None = None) -> None:
        self._render = render
        self._health = health or (lambda: {"healthy": True, "problems": []})
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._serve, host, max(port, 0), reuse_address=True, limit=MAX_REQUEST_HEAD)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
            status, content_type, body, send_body = self._respond(head)
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                f"Connection: close\r\n\r\n".encode("latin-1")
            )
            if send_body:
                writer.write(body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    def _respond(self, head: bytes) -> tuple[str, str, bytes, bool]:
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
        parts = request_line.split()
        if len(parts) < 2:
            return "400 Bad Request", "text/plain", b"bad request\n", True
        method, target = parts[0], parts[1].split("?", 1)[0]
        if method not in ("GET", "HEAD"):
            return "405 Method Not Allowed", "text/plain", b"method not allowed\n", True
        if target == HEALTH_PATH:
            health = self._health()
            body = (json.dumps(health) + "\n").encode()
            return ("200 OK" if health["healthy"] else "503 Service Unavailable"), "application/json", body, \
                method == "GET"
        if target not in METRICS_PATHS:
            return "404 Not Found", "text/plain", b"not found; metrics are at /metrics\n", method == "GET"
        from prometheus_client import CONTENT_TYPE_LATEST

        return "200 OK", CONTENT_TYPE_LATEST, self._render(), method == "GET"
