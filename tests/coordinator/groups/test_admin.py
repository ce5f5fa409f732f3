"""DescribeGroups, ListGroups, DeleteGroups as an operator sees them."""

from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import GroupMetadataKey, OffsetCommitKey, decode_key
from tests.coordinator.groups.harness import subscription


def test_describe_a_stable_group_shows_members_metadata_and_assignments(h):
    ids = h.form_group("g", "a", "b")
    d = h.shard.describe_group("g", include_authorized_operations=True)
    assert (d["error_code"], d["group_state"], d["protocol_type"], d["protocol_data"]) == (ErrorCode.none, "Stable", "consumer", "range")
    members = {m["member_id"]: m for m in d["members"]}
    assert members[ids["a"]]["client_id"] == "a" and members[ids["a"]]["client_host"] == "/127.0.0.1"
    assert members[ids["b"]]["member_metadata"] == subscription("orders")
    assert members[ids["b"]]["member_assignment"] == f"assignment-of-{ids['b']}".encode()
    assert d["authorized_operations"] == (1 << 3) | (1 << 6) | (1 << 8)


def test_describe_a_rebalancing_group_hides_protocol_and_assignments(h):
    ids = h.form_group("g", "a", "b")
    h.join("g", ids["a"], client_id="a")
    d = h.shard.describe_group("g")
    assert d["group_state"] == "PreparingRebalance" and d["protocol_data"] == ""
    assert all(m["member_metadata"] == b"" and m["member_assignment"] == b"" for m in d["members"])
    assert d["authorized_operations"] == -(2**31)


def test_describe_an_unknown_group_says_dead_without_error_as_kafka_does(h):
    d = h.shard.describe_group("nobody", version=5)
    assert (d["error_code"], d["group_state"], d["members"]) == (ErrorCode.none, "Dead", [])
    assert h.shard.describe_group("nobody", version=6)["error_code"] == ErrorCode.group_id_not_found  # KIP-1043


def test_list_groups_with_state_and_type_filters(h):
    h.form_group("stable", "a")
    h.commit("standalone", {("orders", 0): 1})
    error, groups = h.shard.list_groups()
    assert error == ErrorCode.none
    assert {(g["group_id"], g["group_state"], g["protocol_type"], g["group_type"]) for g in groups} == {
        ("stable", "Stable", "consumer", "classic"), ("standalone", "Empty", "", "classic")
    }
    assert [g["group_id"] for g in h.shard.list_groups(("STABLE",))[1]] == ["stable"]
    assert h.shard.list_groups((), ("consumer",))[1] == []
    assert len(h.shard.list_groups((), ("Classic",))[1]) == 2


def test_delete_an_empty_group_writes_tombstones_for_its_offsets_and_itself(h):
    ids = h.form_group("g", "a")
    h.commit("g", {("orders", 0): 1, ("orders", 1): 2}, generation=1, member_id=ids["a"])
    assert h.delete_group("g") == ErrorCode.non_empty_group
    h.leave("g", ids["a"])
    before = len(h.log)
    assert h.delete_group("g") == ErrorCode.none
    tombstones = [(decode_key(k), v) for k, v in h.log[before:]]
    assert {type(k) for k, _ in tombstones} == {OffsetCommitKey, GroupMetadataKey}
    assert all(v is None for _, v in tombstones) and len(tombstones) == 3
    assert h.shard.describe_group("g")["group_state"] == "Dead"
    assert h.delete_group("g") == ErrorCode.group_id_not_found
    assert ("state", "g", "Empty", "Dead") in h.observer.events
