"""The group bench's hand-written request bodies are the frames kio writes for the same requests."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import aioclient
from bench.group_bench import ASSIGNMENT, join_body, heartbeat_v4, join_v9, sync_v5
from bench.requests import encode

ids = st.one_of(st.text(max_size=12), st.text(min_size=120, max_size=200))
int32 = st.integers(-(2**31), 2**31 - 1)


def framed(api_key: int, version: int, body: bytes, correlation: int) -> bytes:
    """What AioConnection.send_body writes."""
    return b"".join((aioclient._FLEXIBLE_HEAD.pack(len(body) + aioclient._FLEXIBLE_HEAD_BYTES, api_key, version,
                                                   correlation), aioclient._CLIENT_ID, body))


@settings(max_examples=100, deadline=None)
@given(group=ids, member=ids, correlation=int32)
def test_join_v9_is_kios_frame(group, member, correlation):
    assert framed(11, 9, join_v9(group, member), correlation) == encode(11, 9, join_body(group, member), correlation)


@settings(max_examples=100, deadline=None)
@given(group=ids, generation=int32, member=ids, protocol=st.one_of(st.none(), ids),
       members=st.lists(ids, max_size=140), correlation=int32)
def test_sync_v5_is_kios_frame(group, generation, member, protocol, members, correlation):
    assignments = [(m, ASSIGNMENT) for m in members]
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": protocol,
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]}
    assert framed(14, 5, sync_v5(group, generation, member, protocol, assignments), correlation) == \
        encode(14, 5, body, correlation)


@settings(max_examples=100, deadline=None)
@given(group=ids, generation=int32, member=ids, correlation=int32)
def test_heartbeat_v4_is_kios_frame(group, generation, member, correlation):
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": None}
    assert framed(12, 4, heartbeat_v4(group, generation, member), correlation) == encode(12, 4, body, correlation)


def test_the_header_is_request_header_v2_with_client_id_bench():
    frame = framed(12, 4, heartbeat_v4("g", 1, "m"), 5)
    assert struct.unpack_from(">ihhi", frame) == (len(frame) - 4, 12, 4, 5)
