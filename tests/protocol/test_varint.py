"""Zig-zag varints: the exact bytes Kafka puts in record headers and lengths."""

import pytest
from hypothesis import given, settings, strategies as st

from groupcoord.protocol.errors import ProtocolError
from groupcoord.protocol.varint import (
    VarintError, decode_unsigned_varint, decode_varint, decode_varlong, encode_unsigned_varint,
    encode_varint, encode_varlong, varint_size, write_unsigned_varint,
)

# Values and encodings from the protobuf/Kafka zig-zag definition.
VECTORS = [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (63, "7e"), (-64, "7f"), (64, "8001"),
    (300, "d804"), (-300, "d704"), (2147483647, "feffffff0f"), (-2147483648, "ffffffff0f"),
]


@pytest.mark.parametrize(("value", "hexed"), VECTORS)
def test_known_varint_encodings(value, hexed):
    assert encode_varint(value).hex() == hexed
    assert decode_varint(bytes.fromhex(hexed)) == (value, len(hexed) // 2)


def test_varlong_extremes_use_ten_bytes():
    assert encode_varlong(-(2**63)).hex() == "ffffffffffffffffff01"
    assert encode_varlong(2**63 - 1).hex() == "feffffffffffffffff01"
    assert decode_varlong(bytes.fromhex("ffffffffffffffffff01")) == (-(2**63), 10)


def test_unsigned_varint_is_not_zigzagged():
    assert encode_unsigned_varint(300).hex() == "ac02"
    assert decode_unsigned_varint(bytes.fromhex("ac02")) == (300, 2)


def test_decoding_from_a_position_returns_the_next_position():
    buf = b"\xff" + encode_varint(-300) + encode_varint(5)
    value, pos = decode_varint(buf, 1)
    assert value == -300
    assert decode_varint(buf, pos) == (5, len(buf))


def test_truncated_or_overlong_varints_are_rejected():
    with pytest.raises(VarintError):
        decode_varint(b"\x80\x80")
    with pytest.raises(VarintError):
        decode_varint(b"\x80\x80\x80\x80\x80\x01")
    with pytest.raises(ValueError):
        encode_varint(2**31)


@settings(derandomize=True)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varlong_round_trip(value):
    encoded = encode_varlong(value)
    assert decode_varlong(encoded) == (value, len(encoded))
    assert varint_size(value) == len(encoded)


@settings(derandomize=True)
@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trip(value):
    encoded = encode_varint(value)
    assert decode_varint(encoded) == (value, len(encoded))


def test_a_read_stops_at_its_end_bound_inside_a_larger_buffer():
    buf = bytes.fromhex("ac02") + b"more"
    assert decode_unsigned_varint(buf, 0, end=2) == (300, 2)
    with pytest.raises(VarintError):
        decode_unsigned_varint(buf, 0, end=1)
    with pytest.raises(ProtocolError):  # a bad varint is bad protocol: the connection is closed
        decode_unsigned_varint(buf, 2, end=2)


def test_overlong_varlongs_are_rejected():
    with pytest.raises(VarintError):
        decode_varlong(b"\x80" * 10 + b"\x01")
    with pytest.raises(VarintError):
        decode_varlong(b"\x80" * 3)


@settings(derandomize=True)
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_writing_into_a_bytearray_matches_encoding(value):
    out = bytearray(b"prefix")
    write_unsigned_varint(out, value)
    assert bytes(out) == b"prefix" + encode_unsigned_varint(value)
    assert decode_unsigned_varint(out, 6) == (value, len(out))
