"""Member ids: the client id and a version 4 UUID, spelled exactly as ``uuid.UUID(bytes=..., version=4)`` does."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcoord.coordinator.groups import shard


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(min_size=16, max_size=16), prefix=st.text(max_size=20))
def test_a_member_id_is_the_prefix_and_the_uuid_of_the_next_random_bytes(raw, prefix):
    shard._random[:] = b"\x00" * 16 + raw  # the next id takes the last 16 bytes
    assert shard.random_member_id(prefix) == f"{prefix}-{uuid.UUID(bytes=raw, version=4)}"
    assert bytes(shard._random) == b"\x00" * 16  # taken, not reused


def test_member_ids_are_version_4_uuids_and_differ():
    shard._random.clear()
    ids = [shard.random_member_id("consumer-1") for _ in range(600)]  # past one refill of the random bytes
    assert len(set(ids)) == len(ids)
    for member_id in ids:
        assert member_id.startswith("consumer-1-")
        value = uuid.UUID(member_id[len("consumer-1-"):])
        assert str(value) == member_id[len("consumer-1-"):]
        assert value.version == 4 and value.variant == uuid.RFC_4122
