"""A minimal raw Kafka protocol client: one connection, one request in flight, kio bodies.

It deliberately shares no code with groupcoord's own protocol/ package, so a codec bug there cannot hide
itself by being mirrored on the client side of the differential tests.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import struct
from dataclasses import dataclass, field
from typing import Any

from kio.index import load_response_schema
from kio.schema.api_versions.v0.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer

CLIENT_ID = "groupcoord-conformance"
_SIZE = struct.Struct(">i")
DEFAULT_TIMEOUT_S = 30.0


class WireError(RuntimeError):
    """The peer broke the protocol: wrong correlation id, truncated frame or closed connection."""


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def encode_request(request: Any, correlation_id: int, client_id: str = CLIENT_ID) -> bytes:
    """Frames `request` behind the header version its class declares (v1 for classic, v2 for flexible)."""
    header_cls = request.__header_schema__
    header = header_cls(request_api_key=request.__api_key__, request_api_version=request.__version__,
                        correlation_id=correlation_id, client_id=client_id)
    body = io.BytesIO()
    entity_writer(header_cls)(body, header)
    entity_writer(type(request))(body, request)
    payload = body.getvalue()
    return _SIZE.pack(len(payload)) + payload


def decode_response(payload: bytes, api_key: int, api_version: int) -> tuple[int, Any]:
    """Returns (correlation id, response entity); kio's response classes carry the right header version."""
    response_cls = load_response_schema(api_key, api_version)
    header, used = entity_reader(response_cls.__header_schema__)(payload, 0)
    response, _ = entity_reader(response_cls)(payload, used)
    return header.correlation_id, response


@dataclass
class Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    timeout_s: float = DEFAULT_TIMEOUT_S
    _correlation: itertools.count = field(default_factory=lambda: itertools.count(1))

    @classmethod
    async def open(cls, address: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Connection:
        host, port = split_address(address)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
        return cls(reader, writer, timeout_s)

    async def send(self, request: Any) -> Any:
        correlation_id, payload = await self._exchange(request)
        answered_id, response = decode_response(payload, request.__api_key__, request.__version__)
        if answered_id != correlation_id:
            raise WireError(f"expected correlation id {correlation_id}, got {answered_id}")
        return response

    async def send_for_payload(self, request: Any) -> bytes:
        """The response frame undecoded (header included), for answers kio cannot read: it refuses the -1
        start time Kafka gives an Empty transaction in DescribeTransactions."""
        return (await self._exchange(request))[1]

    async def _exchange(self, request: Any) -> tuple[int, bytes]:
        correlation_id = next(self._correlation)
        self.writer.write(encode_request(request, correlation_id))
        await self.writer.drain()
        return correlation_id, await asyncio.wait_for(self._read_frame(), self.timeout_s)

    async def _read_frame(self) -> bytes:
        try:
            (size,) = _SIZE.unpack(await self.reader.readexactly(4))
            return await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as exc:
            raise WireError("connection closed before a whole response arrived") from exc

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass


async def supported_versions(address: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[int, tuple[int, int]]:
    """ApiVersions v0 (every broker answers it): api key -> (min, max) version served."""
    connection = await Connection.open(address, timeout_s)
    try:
        response = await connection.send(ApiVersionsRequest())
    finally:
        await connection.close()
    if response.error_code != ErrorCode.none:
        raise WireError(f"ApiVersions failed with {response.error_code.name}")
    return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
