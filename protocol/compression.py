"""Record batch compression codecs (attribute bits 0-2) through cramjam.

Encoding produces what a Java Kafka client produces: snappy in the xerial stream framing
(snappy-java's ``SnappyOutputStream``), lz4 in the LZ4 frame format with independent
blocks. Decoding also accepts raw (unframed) snappy, which librdkafka and some
non-Java producers send.
"""

from __future__ import annotations

import struct
from enum import IntEnum

import cramjam


class CompressionType(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class CompressionError(ValueError):
    """The compressed payload of a batch could not be decoded."""


XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")
_XERIAL_BLOCK = 32 * 1024
_INT32 = struct.Struct(">i")


def compress(codec: int, data: bytes | bytearray | memoryview) -> bytes:
    codec = CompressionType(codec)
    if codec is CompressionType.NONE:
        return bytes(data)
    if codec is CompressionType.GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec is CompressionType.SNAPPY:
        return _xerial_snappy_compress(data)
    if codec is CompressionType.LZ4:
        compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
        compressor.compress(bytes(data))
        return bytes(compressor.finish())
    return bytes(cramjam.zstd.compress(data))


def decompress(codec: int, data: bytes | bytearray | memoryview) -> bytes:
    try:
        codec = CompressionType(codec)
    except ValueError:
        raise CompressionError(f"unknown compression codec {codec}") from None
    try:
        if codec is CompressionType.NONE:
            return bytes(data)
        if codec is CompressionType.GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec is CompressionType.SNAPPY:
            return _snappy_decompress(data)
        if codec is CompressionType.LZ4:
            return bytes(cramjam.lz4.decompress(data))
        return bytes(cramjam.zstd.decompress(data))
    except CompressionError:
        raise
    except Exception as exc:  # cramjam raises its own DecompressionError type
        raise CompressionError(f"cannot decompress {codec.name.lower()} payload: {exc}") from exc


def _xerial_snappy_compress(data: bytes | bytearray | memoryview) -> bytes:
    view = memoryview(data)
    out = bytearray(_XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1))
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start:start + _XERIAL_BLOCK]))
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)


def _snappy_decompress(data: bytes | bytearray | memoryview) -> bytes:
    view = memoryview(data)
    if bytes(view[:8]) != XERIAL_MAGIC:
        return bytes(cramjam.snappy.decompress_raw(view))
    pos = _XERIAL_HEADER.size
    out = bytearray()
    while pos < len(view):
        if pos + 4 > len(view):
            raise CompressionError("xerial snappy block length is cut short")
        (size,) = _INT32.unpack_from(view, pos)
        pos += 4
        if size < 0 or pos + size > len(view):
            raise CompressionError("xerial snappy block runs past the payload")
        out += cramjam.snappy.decompress_raw(view[pos:pos + size])
        pos += size
    return bytes(out)
