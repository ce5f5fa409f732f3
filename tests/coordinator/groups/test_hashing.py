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
