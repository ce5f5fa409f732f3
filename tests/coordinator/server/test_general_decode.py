"""A request read by the dispatcher's general path (no fast codec) after its API version has been served once takes
a shorter way (the header version and kio's reader remembered): it decodes exactly as the first request of that
version did, and a malformed one closes the connection with the same reason and details."""

import struct

from hypothesis import given, settings, strategies as st

from groupcoord.coordinator.server.dispatch import CloseConnection, Dispatcher
from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class

PRODUCE, METADATA, API_VERSIONS, DESCRIBE_CLUSTER = 0, 3, 18, 60


def handler(ctx, request):
    return {"error_code": 0}


def dispatcher() -> Dispatcher:
    d = Dispatcher()
    for key, lowest, top in ((PRODUCE, 3, 11), (METADATA, 0, 12), (API_VERSIONS, 0, 4), (DESCRIBE_CLUSTER, 0, 0)):
        d.register(key, handler, lowest, top)
    return d


def request_frame(key: int, version: int, client_id: str | None) -> bytes:
    bodies = {
        PRODUCE: {"transactional_id": None, "acks": -1, "timeout": 100,
                  "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": None}]}]},
        METADATA: {"topics": None, "allow_auto_topic_creation": False},
        API_VERSIONS: {"client_software_name": "t", "client_software_version": "1"},
        DESCRIBE_CLUSTER: {"include_cluster_authorized_operations": False},
    }
    body = bodies[key]
    return encode_request_header(key, version, 7, client_id, is_flexible(key, version)) + encode_entity(
        build(request_class(key, version), body, fill_missing=True))


def outcome(d: Dispatcher, frame: bytes):
    try:
        decoded = d.decode(frame, "127.0.0.1", 1)
    except CloseConnection as exc:
        return ("closed", exc.reason, exc.details)
    return ("decoded", decoded.ctx, decoded.request, decoded.handler, decoded.immediate)


versions = st.sampled_from([(PRODUCE, 3), (PRODUCE, 9), (PRODUCE, 11), (METADATA, 1), (METADATA, 9), (METADATA, 12),
                            (API_VERSIONS, 2), (API_VERSIONS, 3), (DESCRIBE_CLUSTER, 0)])


@settings(max_examples=300, deadline=None)
@given(versions, st.one_of(st.none(), st.text(max_size=8)), st.integers(0, 60), st.binary(max_size=12),
       st.booleans())
def test_a_request_after_its_version_was_served_decodes_as_the_first_one(shape, client_id, cut, junk, damage):
    key, version = shape
    whole = request_frame(key, version, client_id)
    frame = whole
    if damage:  # cut short (the header or the body) and followed by junk: malformed, or not, either way alike
        frame = whole[:max(4, len(whole) - cut)] + junk
    warmed = dispatcher()
    assert outcome(warmed, whole)[0] == "decoded"  # the version served once: remembered
    assert outcome(warmed, frame) == outcome(dispatcher(), frame)


def test_a_handler_registered_again_is_the_one_called_after_the_version_was_served():
    d = dispatcher()
    frame = request_frame(METADATA, 12, "c")
    d.decode(frame, "127.0.0.1", 1)

    def other(ctx, request):
        return None

    d.register(METADATA, other, 0, 9)  # v12 no longer served
    assert outcome(d, frame)[:2] == ("closed", "unsupported api version")
    assert d.decode(request_frame(METADATA, 9, "c"), "127.0.0.1", 1).handler is other


def test_a_bad_client_id_length_closes_the_connection_as_on_the_first_request():
    frame = bytearray(request_frame(PRODUCE, 9, "c"))
    struct.pack_into(">h", frame, 8, -5)
    warmed = dispatcher()
    warmed.decode(request_frame(PRODUCE, 9, "c"), "127.0.0.1", 1)
    closed = outcome(warmed, bytes(frame))
    assert closed == outcome(dispatcher(), bytes(frame)) and closed[1] == "undecodable request"
