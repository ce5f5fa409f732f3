"""Varints as Kafka writes them: unsigned (lengths and counts of flexible versions, tagged fields) and
zig-zag signed (lengths and deltas inside record batch v2 records).

This is the one codec every reader and writer in ``protocol/`` uses. Small values cost one byte, so
hot loops (record_batch.py) test ``byte < 0x80`` inline and call here only for longer ones. Decoders take
``(buf, pos)`` and return ``(value, next_pos)`` so callers walk a buffer without slicing it; ``end``
bounds a read inside a larger buffer.
"""

from __future__ import annotations

from typing import Final

from .errors import ProtocolError

VARINT_MAX_BYTES: Final = 5
VARLONG_MAX_BYTES: Final = 10

SMALL_VARINTS: Final = tuple([bytes((z,)) for z in range(0, 128, 2)]
                             + [bytes((z & 0x7F | 0x80, z >> 7)) for z in range(128, 8192, 2)])
"""The zig-zag varint of each number 0..4095: the offset deltas a coordinator batch numbers its records with (a
loop turn's commits of one shard are rarely more than a few hundred) and small records' lengths, which its writer
lays out and its reader checks column by column (record_batch.encode_plain_batch, record_shapes). The zig-zag value
z = 2n is under 8192: one byte z below 128, else two (low seven bits with the continuation bit, then z >> 7).
Written out rather than ``encode_varint(n)`` for each n, which cost ~3 ms of every start;
tests/protocol/test_record_batch.py holds the table to ``encode_varint``."""

Buffer = bytes | bytearray | memoryview


class VarintError(ProtocolError):
    """A varint ran past the end of its buffer or past its maximum width."""


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def zigzag_decode(raw: int) -> int:
    return (raw >> 1) ^ -(raw & 1)


def write_unsigned_varint(out: bytearray, value: int) -> None:
    """Append ``value`` (not negative) to ``out``: the encoders' form, with no intermediate bytes."""
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_unsigned_varint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    write_unsigned_varint(out, value)
    return bytes(out)


def decode_unsigned_varint(buf: Buffer, pos: int = 0, max_bytes: int = VARLONG_MAX_BYTES,
                           end: int | None = None) -> tuple[int, int]:
    """The varint at ``buf[pos]``, read no further than ``end`` (default: the end of ``buf``)."""
    if end is None:
        end = len(buf)
    if pos >= end:
        raise VarintError("varint runs past the end of the buffer")
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
        if pos >= end:
            raise VarintError("varint runs past the end of the buffer")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


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


def decode_varint(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    raw, pos = decode_unsigned_varint(buf, pos, VARINT_MAX_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varlong(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """64-bit zig-zag varlong. The record decoder calls this for every value longer than one byte, so it
    is written out in one call rather than through ``decode_unsigned_varint`` (measured: a quarter of
    record decode speed otherwise)."""
    try:
        byte = buf[pos]
        if byte < 0x80:
            return (byte >> 1) ^ -(byte & 1), pos + 1
        result = byte & 0x7F
        shift = 7
        pos += 1
        while True:
            byte = buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return (result >> 1) ^ -(result & 1), pos
            shift += 7
            if shift > 63:  # a tenth byte that continues: longer than VARLONG_MAX_BYTES
                raise VarintError(f"varint longer than {VARLONG_MAX_BYTES} bytes")
    except IndexError:
        raise VarintError("varint runs past the end of the buffer") from None


def varint_size(value: int) -> int:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while raw >= 0x80:
        raw >>= 7
        size += 1
    return size
