"""A tiny blocking Kafka protocol client for tests: one socket, explicit versions, raw access.

Tests use it where a real client library would hide what is being checked (exact versions, pipelining,
malformed input).
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header, parse_response_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, response_reader


class WireClient:
    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, _, port = bootstrap.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self._correlation = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "WireClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def encode(self, api_key: int, version: int, body: dict[str, Any] | Any, client_id: str = "wire-test") -> tuple[int, bytes]:
        self._correlation += 1
        entity = build(request_class(api_key, version), body)
        header = encode_request_header(api_key, version, self._correlation, client_id, is_flexible(api_key, version))
        payload = header + encode_entity(entity)
        return self._correlation, struct.pack(">i", len(payload)) + payload

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes:
        size = struct.unpack(">i", self._read_exact(4))[0]
        return self._read_exact(size)

    def _read_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(n)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def decode(self, api_key: int, version: int, frame: bytes) -> tuple[int, Any]:
        correlation, pos = parse_response_header(frame, api_key, is_flexible(api_key, version))
        entity, _ = response_reader(api_key, version)(frame, pos)
        return correlation, entity

    def request(self, api_key: int, version: int, body: dict[str, Any] | Any) -> Any:
        correlation, data = self.encode(api_key, version, body)
        self.send_raw(data)
        got, entity = self.decode(api_key, version, self.read_frame())
        assert got == correlation, f"correlation id {got} answered for {correlation}"
        return entity
