"""``decompressed_size`` (what batch validation asks of a compressed payload) gives exactly the verdict of
``decompress``, without building the decoded bytes: the same size for a payload that decodes within the bound,
the same error class otherwise. Snappy is checked on both framings (the Java client's xerial, the raw blocks
franz-go and librdkafka send), with payloads cut, flipped and over the bound."""

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.protocol.compression import (CompressionError, CompressionType, DecompressedTooLarge, compress,
                                             decompress, decompressed_size)


def _verdict(fn, codec, payload, max_size):
    try:
        out = fn(codec, payload, max_size)
    except DecompressedTooLarge:
        return "too large"
    except CompressionError:
        return "corrupt"
    return out if isinstance(out, int) else len(out)


def _snappy(data: bytes, framing: str) -> bytes:
    return (compress(CompressionType.SNAPPY, data) if framing == "xerial"
            else bytes(cramjam.snappy.compress_raw(data)))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=3 * 32 * 1024 + 100) | st.builds(lambda n, b: b * n, st.integers(0, 80_000),
                                                                 st.binary(min_size=1, max_size=8)),
       framing=st.sampled_from(["xerial", "raw"]), cut=st.integers(0, 64), flip=st.integers(-1, 200),
       bound=st.integers(0, 300_000))
def test_snappy_size_is_the_decoded_length_or_the_same_refusal(data, framing, cut, flip, bound):
    payload = bytearray(_snappy(data, framing))
    if flip >= 0 and payload:
        payload[flip % len(payload)] ^= 0x5A
    payload = bytes(payload[:max(0, len(payload) - cut)])
    expected = _verdict(decompress, CompressionType.SNAPPY, payload, bound)
    assert _verdict(decompressed_size, CompressionType.SNAPPY, payload, bound) == expected
    if flip < 0 and cut == 0 and bound >= len(data):
        assert expected == len(data)


@pytest.mark.parametrize("framing", ["xerial", "raw"])
def test_snappy_size_of_an_intact_payload(framing):
    data = b"".join(b"%06d" % i + bytes(range(64)) for i in range(2000))  # several xerial blocks
    assert decompressed_size(CompressionType.SNAPPY, _snappy(data, framing)) == len(data)
    assert decompress(CompressionType.SNAPPY, _snappy(data, framing)) == data
