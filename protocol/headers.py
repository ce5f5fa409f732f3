"""Request and response headers, with the header version chosen per API and version as the spec says.

Request header v1 is api key, api version, correlation id and a classic (int16-length) client id; v2
adds tagged fields and is used exactly when the API version is flexible. Response header v0 is the
correlation id; v1 adds tagged fields and is used for flexible versions — except ApiVersions, whose
response header is always v0 so that a client can read the answer before it knows what we support.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import ProtocolError

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7

_PREFIX = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_CORRELATION = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    header_version: int
    body_offset: int


def request_header_version(api_key: int, flexible: bool) -> int:
    if api_key == CONTROLLED_SHUTDOWN_KEY and not flexible:
        return 0
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if flexible else 0


def peek_api(frame: bytes) -> tuple[int, int, int]:
    """Api key, api version and correlation id: the part of every header that never changes layout."""
    if len(frame) < 8:
        raise ProtocolError(f"request of {len(frame)} bytes is shorter than a request header")
    api_key, api_version, correlation_id, _ = _PREFIX.unpack_from(frame + b"\0\0", 0)
    return api_key, api_version, correlation_id


def _read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    value = 0
    while True:
        if pos >= len(buf):
            raise ProtocolError("truncated varint in request header")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ProtocolError("varint too long in request header")


def parse_request_header(frame: bytes, flexible: bool) -> RequestHeader:
    """Parse the header; `flexible` is whether this API version uses the flexible encoding."""
    if len(frame) < 10:
        raise ProtocolError(f"request of {len(frame)} bytes is shorter than a request header")
    api_key, api_version, correlation_id, client_len = _PREFIX.unpack_from(frame, 0)
    version = request_header_version(api_key, flexible)
    pos = 8
    client_id: str | None = None
    if version >= 1:
        pos = 10
        if client_len >= 0:
            end = pos + client_len
            if end > len(frame):
                raise ProtocolError("client id runs past the end of the request")
            try:
                client_id = frame[pos:end].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProtocolError("client id is not UTF-8") from exc
            pos = end
        elif client_len != -1:
            raise ProtocolError(f"invalid client id length {client_len}")
    if version >= 2:
        count, pos = _read_uvarint(frame, pos)
        for _ in range(count):
            _tag, pos = _read_uvarint(frame, pos)
            size, pos = _read_uvarint(frame, pos)
            pos += size
            if pos > len(frame):
                raise ProtocolError("tagged field runs past the end of the request header")
    return RequestHeader(api_key, api_version, correlation_id, client_id, version, pos)


def encode_request_header(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, flexible: bool
) -> bytes:
    """Client side (bench, admin tools, tests)."""
    version = request_header_version(api_key, flexible)
    out = bytearray(struct.pack(">hhi", api_key, api_version, correlation_id))
    if version >= 1:
        if client_id is None:
            out += struct.pack(">h", -1)
        else:
            raw = client_id.encode()
            out += struct.pack(">h", len(raw)) + raw
    if version >= 2:
        out += b"\0"
    return bytes(out)


def encode_response_header(correlation_id: int, api_key: int, flexible: bool) -> bytes:
    if response_header_version(api_key, flexible) == 1:
        return _CORRELATION.pack(correlation_id) + b"\0"
    return _CORRELATION.pack(correlation_id)


def parse_response_header(frame: bytes, api_key: int, flexible: bool) -> tuple[int, int]:
    """Correlation id and body offset of a response (client side)."""
    (correlation_id,) = _CORRELATION.unpack_from(frame, 0)
    pos = 4
    if response_header_version(api_key, flexible) == 1:
        count, pos = _read_uvarint(frame, pos)
        for _ in range(count):
            _tag, pos = _read_uvarint(frame, pos)
            size, pos = _read_uvarint(frame, pos)
            pos += size
    return correlation_id, pos
