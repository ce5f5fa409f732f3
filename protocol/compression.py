"""Record batch compression codecs (attribute bits 0-2) through cramjam.

Encoding produces what a Java Kafka client produces: snappy in the xerial stream framing
(snappy-java's ``SnappyOutputStream``), lz4 in the LZ4 frame format with independent
blocks. Decoding also accepts raw (unframed) snappy, which librdkafka and some
non-Java producers send.

Decoding is bounded: a payload is a client's claim, and a 64 KiB zstd frame of zeros expands to
gigabytes (a decompression bomb), while raw snappy and lz4/zstd frame headers declare a size that may
be a lie. Every codec decodes into a buffer no larger than ``max_size`` (grown from the declared or
estimated size, never past the bound), so the process never allocates more than the bound for one
payload; a larger payload is ``DecompressedTooLarge``, which the broker answers as a corrupt batch.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Any, Callable

import cramjam


class CompressionType(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class CompressionError(ValueError):
    """The compressed payload of a batch could not be decoded."""


class DecompressedTooLarge(CompressionError):
    """The payload expands (or says it expands) past the bound the caller allows."""


MAX_EXPANSION = 64
"""A batch may decompress to this many times the largest batch accepted (``max.message.bytes``): far
above what real records compress by, far below what a bomb expands to."""
MIN_MESSAGE_BYTES_FOR_BOUND = 1024 * 1024


def decompressed_limit(max_message_bytes: int) -> int:
    """The decompressed size bound for batches of at most ``max_message_bytes`` (at least 64 MiB)."""
    return MAX_EXPANSION * max(max_message_bytes, MIN_MESSAGE_BYTES_FOR_BOUND)


DEFAULT_MAX_DECOMPRESSED = decompressed_limit(0)
_FIRST_GUESS = 64 * 1024
_GROWTH = 4
_OUTPUT_FULL = "failed to write whole buffer"  # cramjam's *_into when the output buffer is too small


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


def decompress(codec: int, data: bytes | bytearray | memoryview, max_size: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """The decoded payload; ``CompressionError`` for a corrupt one, ``DecompressedTooLarge`` past ``max_size``."""
    return _decoded(_codec(codec), data, max_size, True)


def decompressed_size(codec: int, data: bytes | bytearray | memoryview,
                      max_size: int = DEFAULT_MAX_DECOMPRESSED) -> int:
    """How many bytes the payload decodes to, checked exactly as ``decompress`` checks it, without
    copying the decoded bytes out (validation needs only the verdict: for a payload of tens of MB that
    copy is the part of the work that holds the interpreter lock)."""
    codec = _codec(codec)
    if codec is _NONE:
        return len(data)
    return _decoded(codec, data, max_size, False)


def _decoded(codec: CompressionType, data: Any, max_size: int, copy: bool) -> Any:
    """``decompress`` (``copy``) or ``decompressed_size``: one decoding, one set of refusals."""
    try:
        if codec is _NONE:
            return bytes(data)
        if codec is _SNAPPY:
            return _snappy_decompress(data, max_size, copy)
        return _bounded(_CODEC_MODULES[codec].decompress_into, data, max_size, _declared_size(codec, data), copy)
    except (CompressionError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # cramjam's DecompressionError, or a native panic (pyo3's PanicException
        # is a BaseException): either way this payload, not the broker, is broken
        raise CompressionError(f"cannot decompress {codec.name.lower()} payload: {exc}"[:300]) from exc


_CODECS = tuple(sorted(CompressionType))  # indexed by value: NONE, GZIP, SNAPPY, LZ4, ZSTD
_NONE = CompressionType.NONE
_SNAPPY = CompressionType.SNAPPY
_CODEC_MODULES: dict[CompressionType, Any] = {
    CompressionType.GZIP: cramjam.gzip, CompressionType.LZ4: cramjam.lz4, CompressionType.ZSTD: cramjam.zstd}


def _codec(codec: int) -> CompressionType:
    """The codec of attribute bits 0-2, or ``CompressionError``: a tuple look-up and module globals rather than
    ``CompressionType(codec)`` and its members read through EnumType (~1 µs a payload on CPython 3.11)."""
    if 0 <= codec < len(_CODECS):
        return _CODECS[codec]
    raise CompressionError(f"unknown compression codec {codec}")


def _too_large(max_size: int, declared: int | None = None) -> DecompressedTooLarge:
    claim = f" (it declares {declared})" if declared is not None else ""
    return DecompressedTooLarge(f"payload decompresses past the bound of {max_size} bytes{claim}")


def _bounded(into: Callable[[Any, bytearray], int], data: Any, max_size: int, declared: int | None,
             copy: bool = True) -> Any:
    """Decode into a buffer grown from the declared size (or a guess) up to ``max_size`` + 1 bytes: a
    buffer that fills up means the payload is larger, so memory stays within the bound whatever it says."""
    if declared is not None and declared > max_size:
        raise _too_large(max_size, declared)
    size = min(max_size + 1, declared + 1 if declared is not None else max(_FIRST_GUESS, len(data) * _GROWTH))
    while True:
        out = bytearray(size)
        try:
            n = into(data, out)
        except Exception as exc:
            if _OUTPUT_FULL not in str(exc):
                raise
            if size > max_size:
                raise _too_large(max_size) from None
            size = min(max_size + 1, size * _GROWTH)
            continue
        if n > max_size:
            raise _too_large(max_size)
        return bytes(memoryview(out)[:n]) if copy else n


_LZ4_MAGIC = 0x184D2204
_ZSTD_MAGIC = 0xFD2FB528
_LE32 = struct.Struct("<I")
_LE64 = struct.Struct("<Q")


_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_MIN = 18  # 10-byte header, empty deflate stream, CRC32 and ISIZE


def _declared_size(codec: CompressionType, data: Any) -> int | None:
    """The content size an lz4 or zstd frame header, or a gzip trailer (ISIZE, modulo 2^32), declares
    (a claim, not a fact: it sizes the first buffer and refuses an honest bomb before decoding any of it)."""
    view = memoryview(data)
    if codec is CompressionType.GZIP:
        if len(view) >= _GZIP_MIN and bytes(view[:2]) == _GZIP_MAGIC:
            return _LE32.unpack_from(view, len(view) - 4)[0]
        return None
    if len(view) < 6:
        return None
    magic = _LE32.unpack_from(view, 0)[0]
    if codec is CompressionType.LZ4 and magic == _LZ4_MAGIC:
        if view[4] & 0x08 and len(view) >= 14:
            return _LE64.unpack_from(view, 6)[0]
    elif codec is CompressionType.ZSTD and magic == _ZSTD_MAGIC:
        descriptor = view[4]
        single_segment = bool(descriptor & 0x20)
        fcs_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        if fcs_size == 0:
            return None
        pos = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 0x03]
        if len(view) < pos + fcs_size:
            return None
        value = int.from_bytes(view[pos:pos + fcs_size], "little")
        return value + 256 if fcs_size == 2 else value
    return None


def _xerial_snappy_compress(data: bytes | bytearray | memoryview) -> bytes:
    view = memoryview(data)
    out = bytearray(_XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1))
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start:start + _XERIAL_BLOCK]))
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)


def _snappy_decompress(data: bytes | bytearray | memoryview, max_size: int, copy: bool = True) -> Any:
    """The decoded payload, raw or in xerial framing; with ``copy=False`` only its size, every block decoded
    and bounded the same way (``decompressed_size``: the verdict without building the decoded bytes)."""
    view = memoryview(data)
    if bytes(view[:8]) != XERIAL_MAGIC:
        out = _raw_snappy(view, max_size)
        return bytes(out) if copy else len(out)
    pos = _XERIAL_HEADER.size
    decoded = 0
    blocks: list[memoryview] = []
    while pos < len(view):
        if pos + 4 > len(view):
            raise CompressionError("xerial snappy block length is cut short")
        (size,) = _INT32.unpack_from(view, pos)
        pos += 4
        if size < 0 or pos + size > len(view):
            raise CompressionError("xerial snappy block runs past the payload")
        block = _raw_snappy(view[pos:pos + size], max_size, decoded)
        decoded += len(block)
        if copy:
            blocks.append(block)
        pos += size
    return b"".join(blocks) if copy else decoded


def _raw_snappy(view: memoryview, max_size: int, already: int = 0) -> memoryview:
    """One raw snappy block, decoded (a view of a buffer of its own). Raw snappy starts with the decoded
    length: checked against the bound (less the ``already`` decoded bytes of earlier xerial blocks) before
    anything is allocated."""
    declared = cramjam.snappy.decompress_raw_len(view)
    if already + declared > max_size:
        raise _too_large(max_size, already + declared)
    out = bytearray(declared)
    n = cramjam.snappy.decompress_raw_into(view, out)
    return memoryview(out)[:n]
