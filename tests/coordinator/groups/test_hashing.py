"""Groups land on the same __consumer_offsets partition as they would on Kafka (vectors checked on a JVM)."""

import pytest

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
    """A million fuzzed frames grew the daemon's RSS by 24 % through this cache (65,536 client strings)."""
    from groupcoord.coordinator.groups import hashing

    hashing._cached_partition_for.cache_clear()
    long_id = "g" * (hashing.CACHED_KEY_CHARS + 1)
    assert hashing.partition_for(long_id, 50) == hashing.kafka_abs(hashing.java_string_hash(long_id)) % 50
    assert hashing._cached_partition_for.cache_info().currsize == 0
    for n in range(hashing.CACHED_KEYS + 100):
        hashing.partition_for(f"group-{n}", 50)
    assert hashing._cached_partition_for.cache_info().currsize == hashing.CACHED_KEYS
    hashing._cached_partition_for.cache_clear()


@pytest.mark.parametrize("group_id", ["", "a", "my-group", "group-\u00e9", "\U0001F600", "polygenelubricants"])
def test_the_partitions_mapping_answers_as_partition_for(group_id):
    from groupcoord.coordinator.groups.hashing import Partitions

    partitions = Partitions(50)
    assert partitions[group_id] == partition_for(group_id, 50)
    assert partitions[group_id] == partition_for(group_id, 50)  # remembered, the same


def test_the_partitions_mapping_is_bounded_and_holds_no_long_keys():
    from groupcoord.coordinator.groups import hashing

    partitions = hashing.Partitions(50)
    long_id = "g" * (hashing.CACHED_KEY_CHARS + 1)
    assert partitions[long_id] == partition_for(long_id, 50)
    assert len(partitions) == 0
    for n in range(hashing.CACHED_KEYS + 100):
        assert partitions[f"group-{n}"] == partition_for(f"group-{n}", 50)
    assert len(partitions) == hashing.CACHED_KEYS
    assert "group-0" not in partitions and f"group-{hashing.CACHED_KEYS + 99}" in partitions  # the oldest went
    hashing._cached_partition_for.cache_clear()
