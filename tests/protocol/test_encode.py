"""Our fast encoder must produce exactly the bytes kio's own writer produces, for every API and
version we answer — given the same data, whether as a dict or as a kio entity."""

import os
import uuid

import pytest
from hypothesis import given, settings, strategies as st

from groupcoord.protocol.build import build
from groupcoord.protocol.encode import MissingField, encode_body
from groupcoord.protocol.registry import encode_entity, kio_versions, response_class

SAMPLES = {
    3: {  # Metadata
        "throttle_time": 5, "error_code": 0, "cluster_id": "abc", "controller_id": 1, "cluster_authorized_operations": 7,
        "brokers": [{"node_id": 1, "host": "h", "port": 9092, "rack": None}],
        "topics": [{"error_code": 0, "name": "t", "topic_id": uuid.UUID(int=5), "is_internal": False,
                    "topic_authorized_operations": 3,
                    "partitions": [{"error_code": 0, "partition_index": p, "leader_id": 1, "leader_epoch": 0,
                                    "replica_nodes": [1], "isr_nodes": [1], "offline_replicas": []} for p in range(3)]}],
    },
    11: {  # JoinGroup
        "throttle_time": 0, "error_code": 0, "generation_id": 3, "protocol_type": "consumer", "protocol_name": "range",
        "leader": "m1", "skip_assignment": False, "member_id": "m2",
        "members": [{"member_id": "m1", "group_instance_id": "i1", "metadata": b"\x00\x01meta"}],
    },
    18: {  # ApiVersions, with a tagged field set
        "error_code": 0, "throttle_time": 0, "api_keys": [{"api_key": 0, "min_version": 3, "max_version": 9}],
        "finalized_features_epoch": 4, "supported_features": [{"name": "f", "min_version": 1, "max_version": 2}],
    },
    12: {"throttle_time": 0, "error_code": 27},
    15: {  # DescribeGroups
        "throttle_time": 0,
        "groups": [{"error_code": 0, "error_message": None, "group_id": "g", "group_state": "Stable", "protocol_type": "consumer",
                    "protocol_data": "range", "authorized_operations": -2147483648,
                    "members": [{"member_id": "m", "group_instance_id": None, "client_id": "c", "client_host": "/127.0.0.1",
                                 "member_metadata": b"x", "member_assignment": b"y"}]}],
    },
}


@pytest.mark.parametrize("api_key", sorted(SAMPLES))
def test_encoder_matches_kio_byte_for_byte_in_every_version(api_key):
    for version in kio_versions(api_key):
        cls = response_class(api_key, version)
        expected = encode_entity(build(cls, SAMPLES[api_key]))
        assert bytes(encode_body(cls, SAMPLES[api_key])) == expected, (api_key, version)
        assert bytes(encode_body(cls, build(cls, SAMPLES[api_key]))) == expected, (api_key, version)


def test_a_missing_required_field_fails_loudly():
    with pytest.raises(MissingField, match="error_code"):
        encode_body(response_class(12, 4), {"throttle_time": 0})


def _fetch_response(records_per_partition):
    return {"throttle_time": 0, "error_code": 0, "session_id": 7, "responses": [
        {"topic": "t", "topic_id": uuid.UUID(int=9), "partitions": [
            {"partition_index": i, "error_code": 0, "high_watermark": 10, "last_stable_offset": 10,
             "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1, "records": records}
            for i, records in enumerate(records_per_partition)]}]}


@pytest.mark.parametrize("version", [4, 11, 12, 16])
def test_fetch_records_given_as_views_are_spliced_into_the_same_bytes(version):
    """A fetch hands its records over as memoryviews: those of SPLICE_MIN bytes or more stay out of the body
    (a FrameParts holding them as they are), the small ones are copied in; the frame's bytes are those of
    the same answer given as bytes, in every layout (legacy and flexible)."""
    from groupcoord.protocol.encode import SPLICE_MIN
    from groupcoord.protocol.framing import FrameParts, frame_parts

    big = bytes(range(256)) * (SPLICE_MIN // 256 + 3)
    other = b"\x07" * (SPLICE_MIN * 2)
    records = [memoryview(big)[:-5], memoryview(b"small"), b"", memoryview(other)]
    plain = encode_body(response_class(1, version), _fetch_response([bytes(r) for r in records]))
    body = encode_body(response_class(1, version), _fetch_response(records))
    assert type(body) is FrameParts
    assert sum(1 for p in body.parts if type(p) is memoryview) == 2
    assert bytes(body) == bytes(plain) and len(body) == len(plain)
    frame = frame_parts(b"HEAD", body)
    assert type(frame) is FrameParts and type(frame.parts[0]) is not memoryview
    assert bytes(frame) == frame_parts(b"HEAD", plain)
    # Small views only: an ordinary bytearray, as before.
    assert type(encode_body(response_class(1, version), _fetch_response([memoryview(b"abc")]))) is bytearray


@settings(max_examples=40, deadline=None, derandomize=True)
@given(sizes=st.lists(st.integers(0, 3 * 16 * 1024), min_size=1, max_size=4), version=st.sampled_from([4, 11, 12, 16, 17]),
       offset=st.integers(0, 1000))
def test_fetch_records_given_as_file_regions_encode_as_kio_encodes_their_bytes(tmp_path_factory, sizes, version, offset):
    """Records left in a file (protocol/file_region.FileRegion, of any size) are cut around, never read into
    the body; the frame's bytes, its regions read, are kio's for the same answer given as bytes."""
    from groupcoord.protocol.file_region import FileRegion
    from groupcoord.protocol.framing import FrameParts, frame_parts

    path = tmp_path_factory.mktemp("regions") / "segment"
    content = bytes((offset + i) % 251 for i in range(offset + sum(sizes)))
    path.write_bytes(content)
    fd = os.open(path, os.O_RDONLY)
    try:
        regions, position = [], offset
        for size in sizes:
            regions.append(FileRegion(os.dup(fd), position, size) if size else b"")
            position += size
        cls = response_class(1, version)
        expected = encode_entity(build(cls, _fetch_response([bytes(r) for r in regions])))
        body = encode_body(cls, _fetch_response(regions))
        held = sum(1 for size in sizes if size)
        assert type(body) is (FrameParts if held else bytearray)
        assert sum(1 for p in getattr(body, "parts", ()) if type(p) is FileRegion) == held
        assert bytes(body) == expected and len(body) == len(expected)
        frame = frame_parts(b"HEAD", body)
        assert bytes(frame) == frame_parts(b"HEAD", expected)
        assert type(frame.parts[0] if held else frame) is bytes
    finally:
        for region in regions:
            if type(region) is FileRegion:
                region.close()
        os.close(fd)
