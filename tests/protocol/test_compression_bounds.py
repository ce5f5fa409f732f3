"""Decompression is bounded: a bomb or a lying declared size costs at most the bound, never gigabytes.

Before the bound, a 64 KiB zstd frame decoded to 2 GiB (8 s, +2 GiB RSS) and a 1 MiB gzip batch to
1 GiB; every payload here would have done the same or worse.
"""

import struct
import time

import cramjam
import pytest

from groupcoord.coordinator.dataplane.batch_validation import BatchRejected, validate_batch
from groupcoord.protocol.compression import (DEFAULT_MAX_DECOMPRESSED, CompressionError, CompressionType,
                                             DecompressedTooLarge, compress, decompress, decompressed_limit)
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.record_batch import (ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER_SIZE, LOG_OVERHEAD, CorruptBatchError,
                                             decode_records, encode_batch)
from groupcoord.protocol.varint import encode_unsigned_varint as _uvarint

CODECS = [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]
MiB = 1024 * 1024


@pytest.mark.parametrize("codec", CODECS)
def test_a_payload_past_the_bound_is_refused(codec):
    bomb = compress(codec, bytes(16 * MiB))
    t0 = time.perf_counter()
    with pytest.raises(DecompressedTooLarge):
        decompress(codec, bomb, max_size=1 * MiB)
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("codec", CODECS)
def test_a_payload_of_exactly_the_bound_decodes(codec):
    data = bytes(range(256)) * 4096  # 1 MiB
    assert decompress(codec, compress(codec, data), max_size=len(data)) == data
    with pytest.raises(DecompressedTooLarge):
        decompress(codec, compress(codec, data), max_size=len(data) - 1)


def test_the_default_bound_stops_a_zstd_bomb_of_a_gibibyte_at_once():
    bomb = bytes(cramjam.zstd.compress(bytes(DEFAULT_MAX_DECOMPRESSED + MiB)))
    t0 = time.perf_counter()
    with pytest.raises(DecompressedTooLarge):
        decompress(CompressionType.ZSTD, bomb)
    assert time.perf_counter() - t0 < 1.0


def test_raw_snappy_declaring_four_gibibytes_is_refused_before_allocating():
    with pytest.raises(DecompressedTooLarge, match="declares 4294967295"):
        decompress(CompressionType.SNAPPY, _uvarint(0xFFFFFFFF) + bytes(16))


def test_xerial_blocks_are_bounded_together():
    data = bytes(3 * 32 * 1024)  # three xerial blocks
    packed = compress(CompressionType.SNAPPY, data)
    assert decompress(CompressionType.SNAPPY, packed, max_size=len(data)) == data
    with pytest.raises(DecompressedTooLarge):
        decompress(CompressionType.SNAPPY, packed, max_size=2 * 32 * 1024 + 1)


def test_a_zstd_frame_declaring_an_absurd_content_size_is_refused_from_its_header():
    lying = struct.pack("<I", 0xFD2FB528) + bytes([0xE0]) + struct.pack("<Q", 1 << 62) + bytes([0x01, 0, 0])
    with pytest.raises(DecompressedTooLarge, match="declares"):
        decompress(CompressionType.ZSTD, lying)


def test_an_lz4_frame_declaring_an_absurd_content_size_is_refused_from_its_header():
    frame = bytearray(compress(CompressionType.LZ4, b"hello"))
    # Set the content-size flag and splice an 8-byte size after FLG/BD; the header checksum then lies too,
    # which does not matter: the declared size is refused before lz4 reads any of it.
    frame[4] |= 0x08
    lying = bytes(frame[:6]) + struct.pack("<Q", 1 << 40) + bytes(frame[6:])
    with pytest.raises(DecompressedTooLarge):
        decompress(CompressionType.LZ4, lying)


@pytest.mark.parametrize("codec", CODECS)
def test_a_truncated_payload_is_a_compression_error(codec):
    packed = compress(codec, bytes(range(256)) * 64)
    with pytest.raises(CompressionError):
        decompress(codec, packed[: len(packed) // 2] + b"\xff" * 8)


def test_a_record_batch_bomb_is_a_corrupt_batch():
    batch = encode_batch([(b"k", bytes(4 * MiB), ())], compression=CompressionType.ZSTD)
    with pytest.raises(CorruptBatchError):
        decode_records(batch, 0, max_decompressed=1 * MiB)


def _with_payload(batch: bytes, payload: bytes) -> bytes:
    """The batch with its records section replaced (length and CRC made true again)."""
    out = bytearray(batch[:HEADER_SIZE]) + payload
    struct.pack_into(">i", out, 8, len(out) - LOG_OVERHEAD)
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(out[ATTRIBUTES_OFFSET:]))
    return bytes(out)


@pytest.mark.parametrize("codec", CODECS)
def test_produce_answers_corrupt_message_for_a_bomb(codec):
    """Kafka decompresses every compressed batch it is sent; so do we, within decompressed_limit(max.message.bytes)
    = 64 x max(max.message.bytes, 1 MiB), i.e. 64 MiB at Kafka's default. Snappy cannot expand more than
    ~21x, so its bomb under 1 MiB is a raw snappy payload that lies about its length."""
    if codec is CompressionType.SNAPPY:
        bomb = _with_payload(encode_batch([(b"k", b"v", ())], compression=codec), _uvarint(0xFFFFFFFF) + bytes(64))
    else:
        bomb = encode_batch([(b"k", bytes(decompressed_limit(1048588) + MiB), ())], compression=codec)
    assert len(bomb) < 1048588
    result = validate_batch(bomb, api_version=9, max_message_bytes=1048588, compacted=False)
    assert isinstance(result, BatchRejected) and result.error is ErrorCode.corrupt_message, result


def test_produce_accepts_a_compressed_batch_within_the_bound():
    batch = encode_batch([(b"k", b"v" * 1000, ()) for _ in range(100)], compression=CompressionType.LZ4)
    result = validate_batch(batch, api_version=9, max_message_bytes=1048588, compacted=False)
    assert not isinstance(result, BatchRejected), result


class PanicException(BaseException):
    """What pyo3 raises when a Rust extension (cramjam) panics: a BaseException, not an Exception."""


def test_a_native_panic_while_decompressing_is_a_corrupt_batch_not_a_crash(monkeypatch):
    def panic(data, out):
        raise PanicException("attempt to multiply with overflow")

    monkeypatch.setattr(cramjam.zstd, "decompress_into", panic)
    batch = encode_batch([(b"k", b"v" * 100, ())], compression=CompressionType.ZSTD)
    result = validate_batch(batch, api_version=9, max_message_bytes=1048588, compacted=False)
    assert isinstance(result, BatchRejected) and result.error is ErrorCode.corrupt_message
    assert "overflow" in result.message


def test_a_gzip_payload_lying_in_its_trailer_is_still_bounded():
    packed = bytearray(compress(CompressionType.GZIP, bytes(4 * MiB)))
    packed[-4:] = (100).to_bytes(4, "little")  # ISIZE says 100 bytes
    with pytest.raises(CompressionError):  # too large, or a trailer mismatch: never 4 MiB past a 1 MiB bound
        decompress(CompressionType.GZIP, bytes(packed), max_size=1 * MiB)
