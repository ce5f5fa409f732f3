"""Request and response headers, with the header version chosen per API and version as the spec says.

Request header v1 is api key, api version, correlation id and a classic (int16-length) client id; v2
adds tagged fields and is used exactly when the API version is flexible. Response header v0 is the
correlation id; v1 adds tagged fields and is used for flexible versions — except ApiVersions, whose
response header is always v0 so that a client can read the answer before it knows what we support.
"""

from __future__ import annotations

import struct

from groupcoord.protocol.frozen import frozen_dataclass

from .api_keys import ApiKey
from .errors import ProtocolError
from .varint import VARINT_MAX_BYTES, decode_unsigned_varint

API_VERSIONS_KEY = ApiKey.API_VERSIONS  # its response header is always v0
CONTROLLED_SHUTDOWN_KEY = 7  # gone from Kafka 4's specs (so from ApiKey), but its v0 kept request header v0

_PREFIX = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_CORRELATION = struct.Struct(">i")


@frozen_dataclass
class RequestHeader:
    """A request's header fields, and which header version carried them (flexible versions add tagged fields)."""
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
    # Padded from its first 8 bytes only: ``frame + pad`` copied the whole frame (a 256 KiB produce, each time).
    api_key, api_version, correlation_id, _ = _PREFIX.unpack_from(bytes(frame[:8]) + b"\0\0", 0)
    return api_key, api_version, correlation_id


def _skip_tagged_fields(buf: bytes, pos: int) -> int:
    """Past a header's tagged fields (none of them is ours to read)."""
    count, pos = decode_unsigned_varint(buf, pos, VARINT_MAX_BYTES)
    for _ in range(count):
        _tag, pos = decode_unsigned_varint(buf, pos, VARINT_MAX_BYTES)
        size, pos = decode_unsigned_varint(buf, pos, VARINT_MAX_BYTES)
        pos += size
    return pos


def parse_request_header(frame: bytes, flexible: bool) -> RequestHeader:
    """Parse the header; `flexible` is whether this API version uses the flexible encoding."""
    if len(frame) < 10:
        raise ProtocolError(f"request of {len(frame)} bytes is shorter than a request header")
    api_key, api_version, _, _ = _PREFIX.unpack_from(frame, 0)
    version = request_header_version(api_key, flexible)
    correlation_id, client_id, pos = read_request_header(frame, version)
    return RequestHeader(api_key, api_version, correlation_id, client_id, version, pos)


def read_request_header(frame: bytes, version: int) -> tuple[int, str | None, int]:
    """(correlation id, client id, body offset) of a request header of ``version`` (``request_header_version``)
    whose api key and version are already known: what ``parse_request_header`` reads, without building its
    object (the dispatcher's general path reads every request not given to a fast codec this way). The frame
    must hold at least 10 bytes; a malformed header raises ``ProtocolError``."""
    _, _, correlation_id, client_len = _PREFIX.unpack_from(frame, 0)
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
        pos = _skip_tagged_fields(frame, pos)
        if pos > len(frame):
            raise ProtocolError("tagged field runs past the end of the request header")
    return correlation_id, client_id, pos


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
        pos = _skip_tagged_fields(frame, pos)
    return correlation_id, pos
