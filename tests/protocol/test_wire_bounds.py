"""The bounds check in front of kio's native reader: lying frames are refused before kio allocates,
well-formed ones pass untouched, and no mutation of any request schema can take the process down."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groupcoord.protocol.headers import parse_request_header, peek_api
from groupcoord.protocol.registry import is_flexible, request_class, request_reader
from groupcoord.protocol.wire_bounds import WireBoundsError, check
from tests.support.wire_fuzz import body, every_request_version

# Frames from the reliability report: each made kio's native reader ask for tens of GB and abort.
KILLER_FRAMES = {
    "FindCoordinator v4, coordinator keys claim billions": "0000001c000a0004000101f700016600c5e1f2db802f29ce65a317fbb4ef14a5",
    "Metadata v12, topics claim 2^32": "000000110003000c0000000700017800ffffffff0f",
}


def _read(frame_hex: str):
    frame = bytes.fromhex(frame_hex)[4:]
    key, version, _ = peek_api(frame)
    header = parse_request_header(frame, is_flexible(key, version))
    return request_reader(key, version)(frame, header.body_offset)


@pytest.mark.parametrize("name", sorted(KILLER_FRAMES))
def test_a_lying_array_count_is_refused_before_kio_reads_it(name):
    with pytest.raises(WireBoundsError, match="cannot fit"):
        _read(KILLER_FRAMES[name])


def test_describe_groups_with_a_huge_group_count_is_refused():
    # DescribeGroups v5 (flexible): header, then a compact array count of 2^32 - 2 and nothing else
    payload = bytes.fromhex("000f0005000000070001780000") + bytes.fromhex("ffffffff0f")
    with pytest.raises(WireBoundsError):
        check(request_class(15, 5), payload, len(payload) - 5)


def test_every_well_formed_request_of_every_schema_passes_and_reads():
    rng = random.Random(848)
    for api_key, version in every_request_version():
        cls = request_class(api_key, version)
        for _ in range(5):
            data = body(cls, rng)
            check(cls, data, 0)  # never a false alarm on valid bytes
            request_reader(api_key, version)(data, 0)


def test_a_nested_array_inside_a_tagged_field_is_checked():
    # AddPartitionsToTxn v4 (flexible, nested arrays) with the outer count cut to claim more than is there
    cls = request_class(24, 4)
    data = bytearray(body(cls, random.Random(1)))
    data[0] = 0x7F  # the first compact array count: 126 transactions in a body of a few bytes
    with pytest.raises(WireBoundsError):
        check(cls, bytes(data), 0)


FUZZ_CHILD = textwrap.dedent(
    """
    import random, sys
    from groupcoord.protocol.registry import request_class, request_reader
    from groupcoord.protocol.errors import ProtocolError
    from tests.support.wire_fuzz import body, every_request_version, mutate, request_frame
    from groupcoord.protocol.headers import parse_request_header, peek_api
    from groupcoord.protocol.registry import is_flexible
    rng = random.Random(int(sys.argv[1]))
    refused = read = 0
    for api_key, version in every_request_version():
        for _ in range(int(sys.argv[2])):
            frame = mutate(request_frame(api_key, version, rng), rng)[4:]
            try:
                key, ver, _ = peek_api(frame)
                header = parse_request_header(frame, is_flexible(api_key, version))
                request_reader(api_key, version)(frame, header.body_offset)
                read += 1
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException:
                refused += 1
    print(read, refused)
    """
)


def test_mutated_frames_of_every_schema_never_abort_the_process():
    """Run in a child: an abort in native code cannot be caught, only seen from outside."""
    done = subprocess.run(
        [sys.executable, "-c", FUZZ_CHILD, "20261124", "40"], capture_output=True, text=True, timeout=240,
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    read, refused = map(int, done.stdout.split())
    assert refused > 0 and read > 0


def test_a_null_array_is_refused_where_the_version_requires_one_and_kept_where_it_may_be_null():
    # FindCoordinator v4's coordinator keys are not nullable; Metadata v12's topics are (null = all topics)
    find = request_class(10, 4)
    with pytest.raises(WireBoundsError, match="null array"):
        check(find, b"\x00" + b"\x00" + b"\x00", 0)  # key type 0, null keys (compact 0), no tags
    metadata = request_class(3, 12)
    check(metadata, b"\x00" + b"\x00" + b"\x00" + b"\x00", 0)  # null topics, two booleans, no tags


def test_a_string_past_kafkas_limit_is_refused_only_in_frames_that_can_hold_one():
    """Kafka's readers refuse a string of more than 32,767 bytes; only an entity larger than that can hold
    one, so smaller ones keep the short walk (a Heartbeat is not walked at all)."""
    from groupcoord.protocol.build import build
    from groupcoord.protocol.registry import encode_entity
    from groupcoord.protocol.wire_bounds import checked_reader

    cls = request_class(12, 4)
    read = checked_reader(cls)
    for size, refused in ((10, False), (32767, False), (32768, True), (1_000_000, True)):
        body = encode_entity(build(cls, {"group_id": "g" * size, "generation_id": 1, "member_id": "m",
                                         "group_instance_id": None}))
        if refused:
            with pytest.raises(WireBoundsError, match="Kafka's limit is 32767"):
                read(body, 0)
        else:
            assert read(body, 0)[0].group_id == "g" * size
