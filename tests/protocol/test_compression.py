"""Batch compression codecs: what Java clients send and what old/new clients can read."""

import gzip

import cramjam
import pytest

from groupcoord.protocol.compression import XERIAL_MAGIC, CompressionError, CompressionType, compress, decompress

PAYLOAD = b"".join(b"record-%05d|" % i for i in range(20000))  # > 32 KiB, several xerial blocks


@pytest.mark.parametrize("codec", list(CompressionType))
def test_every_codec_round_trips(codec):
    packed = compress(codec, PAYLOAD)
    assert decompress(codec, packed) == PAYLOAD
    if codec is not CompressionType.NONE:
        assert len(packed) < len(PAYLOAD)


def test_snappy_is_written_in_xerial_framing_like_the_java_client():
    packed = compress(CompressionType.SNAPPY, PAYLOAD)
    assert packed.startswith(XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01")


def test_raw_snappy_from_librdkafka_style_producers_is_accepted():
    raw = bytes(cramjam.snappy.compress_raw(PAYLOAD))
    assert decompress(CompressionType.SNAPPY, raw) == PAYLOAD


def test_lz4_uses_the_frame_format_with_independent_blocks():
    packed = compress(CompressionType.LZ4, PAYLOAD)
    assert packed[:4] == b"\x04\x22\x4d\x18"
    assert packed[4] & 0x20, "block independence flag"


def test_gzip_output_is_standard_gzip():
    assert gzip.decompress(compress(CompressionType.GZIP, PAYLOAD)) == PAYLOAD


@pytest.mark.parametrize("codec", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4,
                                   CompressionType.ZSTD])
def test_garbage_payload_raises_compression_error(codec):
    with pytest.raises(CompressionError):
        decompress(codec, b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x10\x00garbage"
                   if codec is CompressionType.SNAPPY else b"definitely not compressed data")


def test_unknown_codec_id_is_a_compression_error():
    with pytest.raises(CompressionError):
        decompress(5, b"x")
