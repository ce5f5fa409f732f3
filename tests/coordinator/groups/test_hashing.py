"""Groups land on the same __consumer_offsets partition as they would on Kafka (vectors checked on a JVM)."""

import pytest
from hypothesis import given, settings, strategies as st

from groupcoord.coordinator.groups.hashing import java_string_hash, partition_for


@pytest.mark.parametrize(
    "group_id, hash_code, partition",
    [
        ("", 0, 0),
        ("a", 97, 47),
        ("my-group", -1906497762, 12),
        ("test-group", 627841412, 12),
        ("console-consumer-12345", 158455506, 6),
        ("group-\u00e9", 293427483, 33),
        ("\U0001F600", 1772899, 49),
        ("polygenelubricants", -2147483648, 0),
    ],
)
def test_group_partition_matches_kafka(group_id, hash_code, partition):
    assert java_string_hash(group_id) == hash_code
    assert partition_for(group_id, 50) == partition


def test_the_routing_cache_is_bounded_and_holds_no_long_keys():
    """A million fuzzed frames grew the daemon's RSS by 24 % through this cache (65,536 client strings). One table
    per partition count, shared by partition_for and the heartbeat lane, at most CACHED_KEYS short keys, the
    oldest forgotten first."""
    from groupcoord.coordinator.groups import hashing

    table = hashing.partitions(37)  # a count no other test routes by: this table starts empty
    assert hashing.partitions(37) is table
    long_id = "g" * (hashing.CACHED_KEY_CHARS + 1)
    assert hashing.partition_for(long_id, 37) == hashing.kafka_abs(hashing.java_string_hash(long_id)) % 37
    assert len(table) == 0
    for n in range(hashing.CACHED_KEYS + 100):
        group_id = f"group-{n}"
        assert hashing.partition_for(group_id, 37) == hashing.kafka_abs(hashing.java_string_hash(group_id)) % 37
    assert len(table) == hashing.CACHED_KEYS
    assert "group-0" not in table and f"group-{hashing.CACHED_KEYS + 99}" in table  # the oldest went
    hashing._TABLES.pop(37)


@pytest.mark.parametrize(
    "group_id, partition",
    [("", 0), ("a", 47), ("my-group", 12), ("group-\u00e9", 33), ("\U0001F600", 49), ("polygenelubricants", 0)],
)
def test_the_heartbeat_lane_s_table_answers_kafka_s_partition(group_id, partition):
    from groupcoord.coordinator.groups.hashing import Partitions

    partitions = Partitions(50)
    assert partitions[group_id] == partition
    assert partitions[group_id] == partition  # remembered, the same


def _reference_hash(text: str) -> int:
    """Java's loop as String.hashCode() spells it, one UTF-16 code unit at a time."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=300), st.text(alphabet=st.characters(max_codepoint=127), max_size=300)))
def test_the_chunked_sum_is_java_s_loop(text):
    """java_string_hash sums 64 code units at a time: the same as the loop for any length (chunk edges, ids
    longer than a chunk) and any text (ASCII, non-ASCII, surrogate pairs)."""
    assert java_string_hash(text) == _reference_hash(text)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 127, 128, 129, 1000])
def test_the_chunk_edges(n):
    for text in ("z" * n, "\u00e9" * n, "\U0001F600" * n):
        assert java_string_hash(text) == _reference_hash(text)
