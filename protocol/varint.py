"""Zig-zag varints as used inside record batch v2 records.

Kafka records carry lengths and deltas as protobuf-style zig-zag varints so that small
(and -1 "null") values cost one byte. Decoders take ``(buf, pos)`` and return
``(value, next_pos)`` so callers can walk a buffer without slicing it.
"""

from __future__ import annotations

from typing import Final

VARINT_MAX_BYTES: Final = 5
VARLONG_MAX_BYTES: Final = 10


class VarintError(ValueError):
    """A varint ran past the end of its buffer or past its maximum width."""


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def zigzag_decode(raw: int) -> int:
    return (raw >> 1) ^ -(raw & 1)


def encode_unsigned_varint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_unsigned_varint(buf: bytes | bytearray | memoryview, pos: int = 0,
                           max_bytes: int = VARLONG_MAX_BYTES) -> tuple[int, int]:
    try:
        byte = buf[pos]
        if byte < 0x80:
            return byte, pos + 1
        result = byte & 0x7F
        shift = 7
        limit = pos + max_bytes
        pos += 1
        while True:
            if pos >= limit:
                raise VarintError(f"varint longer than {max_bytes} bytes")
            byte = buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos
            shift += 7
    except IndexError:
        raise VarintError("varint runs past the end of the buffer") from None


def encode_varint(value: int) -> bytes:
    """32-bit zig-zag varint."""
    if not -0x80000000 <= value <= 0x7FFFFFFF:
        raise ValueError(f"{value} does not fit a 32-bit varint")
    return encode_unsigned_varint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """64-bit zig-zag varlong."""
    if not -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
        raise ValueError(f"{value} does not fit a 64-bit varlong")
    return encode_unsigned_varint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def decode_varint(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int]:
    raw, pos = decode_unsigned_varint(buf, pos, VARINT_MAX_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varlong(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int]:
    raw, pos = decode_unsigned_varint(buf, pos, VARLONG_MAX_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos


def varint_size(value: int) -> int:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while raw >= 0x80:
        raw >>= 7
        size += 1
    return size
