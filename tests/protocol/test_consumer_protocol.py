"""The consumer embedded protocol: what a Java/kafka-python consumer puts in JoinGroup and SyncGroup."""

import struct

import pytest

from groupcoord.protocol.consumer_protocol import (
    Assignment,
    ConsumerProtocolError,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    subscribed_topics,
)


def s(text): return struct.pack(">h", len(text)) + text.encode()


def test_a_v0_subscription_built_by_hand_decodes():
    data = struct.pack(">h", 0) + struct.pack(">i", 2) + s("orders") + s("payments") + struct.pack(">i", -1)
    sub = decode_subscription(data)
    assert sub.topics == ("orders", "payments") and sub.user_data is None and sub.version == 0


def test_a_v3_subscription_round_trips_every_field():
    sub = Subscription(("orders",), b"u", (("orders", (0, 1)),), 5, "rack-a", version=3)
    assert decode_subscription(encode_subscription(sub)) == sub


def test_a_newer_version_is_read_with_the_newest_layout_ignoring_trailing_bytes():
    data = encode_subscription(Subscription(("orders",), version=3))
    newer = struct.pack(">h", 9) + data[2:] + b"future-fields"
    assert decode_subscription(newer).topics == ("orders",)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignments_round_trip_at_every_version(version):
    assignment = Assignment((("orders", (0, 2)), ("payments", (1,))), b"x", version=version)
    assert decode_assignment(encode_assignment(assignment)) == assignment


def test_a_v0_assignment_built_by_hand_decodes():
    data = struct.pack(">h", 0) + struct.pack(">i", 1) + s("orders") + struct.pack(">i", 2) + struct.pack(">ii", 0, 2) + struct.pack(">i", -1)
    assert decode_assignment(data).partitions == (("orders", (0, 2)),)


def test_garbage_is_an_error_and_subscribed_topics_says_unknown():
    with pytest.raises(ConsumerProtocolError):
        decode_subscription(b"\x00")
    with pytest.raises(ConsumerProtocolError):
        decode_subscription(b"\x00\x00\x00\x00\x00\x05ab")
    assert subscribed_topics("consumer", b"\x00\x00\xff") is None
    assert subscribed_topics("connect", encode_subscription(Subscription(("x",)))) is None
    assert subscribed_topics("consumer", encode_subscription(Subscription(("x", "y")))) == {"x", "y"}


def test_subscribed_topics_answers_the_same_from_its_cache_and_stays_bounded():
    from groupcoord.protocol import consumer_protocol

    raw = encode_subscription(Subscription(("a", "b")))
    first = subscribed_topics("consumer", raw)
    assert subscribed_topics("consumer", bytearray(raw)) == first == {"a", "b"}  # any bytes-like, same answer
    assert subscribed_topics("consumer", b"\x00\x00\xff") is None
    assert subscribed_topics("consumer", b"\x00\x00\xff") is None  # an undecodable answer is kept too
    for n in range(consumer_protocol._SUBSCRIBED_CACHED + 10):
        assert subscribed_topics("consumer", encode_subscription(Subscription((f"t{n}",)))) == {f"t{n}"}
    assert len(consumer_protocol._subscribed) <= consumer_protocol._SUBSCRIBED_CACHED
