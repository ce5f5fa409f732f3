"""Frames arrive in arbitrary pieces; the decoder must reassemble exactly the frames that were sent."""

import struct

import pytest
from hypothesis import given, strategies as st

from groupcoord.protocol.framing import FrameDecoder, FrameTooLarge, encode_frame, frame_parts


@given(
    payloads=st.lists(st.binary(max_size=300), max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
)
def test_frames_split_at_any_byte_boundary_come_back_whole(payloads, cuts):
    stream = b"".join(encode_frame(p) for p in payloads)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    decoder = FrameDecoder()
    got = []
    for a, b in zip(points, points[1:]):
        got.extend(decoder.feed(stream[a:b]))
    assert got == payloads
    assert decoder.buffered == 0


def test_an_absurd_length_is_refused_before_anything_is_buffered():
    decoder = FrameDecoder(max_frame_size=1024)
    with pytest.raises(FrameTooLarge):
        decoder.feed(struct.pack(">i", 1025))
    with pytest.raises(FrameTooLarge):
        FrameDecoder().feed(struct.pack(">i", -5))


def test_a_frame_of_exactly_the_limit_is_accepted():
    decoder = FrameDecoder(max_frame_size=16)
    assert decoder.feed(encode_frame(b"x" * 16)) == [b"x" * 16]


def test_frame_parts_prefix_the_total_length():
    assert frame_parts(b"abc", b"de") == encode_frame(b"abcde")


def test_a_frame_completed_across_reads_is_its_own_buffer_and_the_rest_keeps_waiting():
    """The piece that completes a waiting frame and starts the next: the frame is handed over as a buffer of
    its own (sliced whole, with no further copy), the next one's start waits, and an absurd size in it is
    refused as soon as its prefix is seen."""
    decoder = FrameDecoder(max_frame_size=1 << 20)
    first, second = b"a" * 5000, b"b" * 7000
    stream = encode_frame(first) + encode_frame(second)
    assert decoder.spans(stream[:3000]) == (stream[:3000], [])
    buffer, bounds = decoder.spans(stream[3000:6000])
    assert bounds == [0, len(first)] and buffer[bounds[0]:bounds[1]] is buffer and buffer == first
    assert decoder.buffered == 6000 - len(encode_frame(first))
    assert decoder.feed(stream[6000:]) == [second] and decoder.buffered == 0
    decoder.spans(encode_frame(first)[:100])
    with pytest.raises(FrameTooLarge):
        decoder.spans(encode_frame(first)[100:] + struct.pack(">i", (1 << 20) + 1) + b"xx")


@given(payload=st.binary(max_size=300))
def test_one_whole_frame_read_alone_is_its_own_span(payload):
    """The commonest read (exactly one frame) is told from its size prefix: the same span the general loop
    gives, nothing buffered; one past the limit is still refused."""
    frame = encode_frame(payload)
    decoder = FrameDecoder()
    buffer, bounds = decoder.spans(frame)
    assert buffer is frame and bounds == [4, len(frame)] and decoder.buffered == 0
    assert buffer[bounds[0]:bounds[1]] == payload
    if payload:
        with pytest.raises(FrameTooLarge):
            FrameDecoder(max_frame_size=len(payload) - 1).spans(frame)
