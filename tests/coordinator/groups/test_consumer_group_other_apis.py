"""The other group APIs on a KIP-848 consumer group, as Kafka 4.x answers them."""

import pytest

from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id


@pytest.fixture
def h() -> Harness:
    return Harness(FakeTopics(orders=6, payments=2), offsets_retention_minutes=1, offsets_retention_check_interval_ms=20_000)


def test_offset_commit_checks_the_member_epoch(h):
    h.cg_join("g", "m1")
    tp = ("orders", 0)
    assert h.commit("g", {tp: 5}, generation=2, member_id="m1", version=9) == {tp: ErrorCode.none}
    assert h.commit("g", {tp: 6}, generation=1, member_id="m1", version=9) == {tp: ErrorCode.stale_member_epoch}
    assert h.commit("g", {tp: 6}, generation=3, member_id="m1", version=9) == {tp: ErrorCode.stale_member_epoch}
    assert h.commit("g", {tp: 6}, generation=2, member_id="ghost", version=9) == {tp: ErrorCode.unknown_member_id}
    assert h.commit("g", {tp: 6}, generation=-1, version=9) == {tp: ErrorCode.unknown_member_id}  # group not empty
    assert h.commit("g", {tp: 6}, generation=2, member_id="m1", version=8) == {tp: ErrorCode.unsupported_version}
    assert h.committed("g") == {tp: 5}
    h.cg("g", "m1", -1)
    assert h.commit("g", {tp: 9}, generation=-1, version=9) == {tp: ErrorCode.none}  # empty: admin commits allowed
    assert h.committed("g") == {tp: 9}


def test_offset_fetch_v9_checks_member_id_and_epoch(h):
    h.cg_join("g", "m1")
    h.commit("g", {("orders", 0): 5}, generation=2, member_id="m1", version=9)
    fetch = lambda member_id, epoch: h.shard.fetch_offsets(OffsetFetch("g", (("orders", (0,)),), False, member_id, epoch))
    assert fetch(None, -1)["error_code"] == ErrorCode.none
    ok = fetch("m1", 2)
    assert ok["error_code"] == ErrorCode.none and ok["topics"][0]["partitions"][0]["committed_offset"] == 5
    assert fetch("m1", 1)["error_code"] == ErrorCode.stale_member_epoch
    assert fetch("ghost", 2)["error_code"] == ErrorCode.unknown_member_id


def test_list_groups_shows_consumer_groups_with_their_type_and_state(h):
    h.cg_join("cg", "m1")
    h.form_group("classic", "a")
    _, rows = h.shard.list_groups()
    by_id = {r["group_id"]: r for r in rows}
    assert by_id["cg"] == {"group_id": "cg", "protocol_type": "consumer", "group_state": "Stable", "group_type": "consumer"}
    assert by_id["classic"]["group_type"] == "classic"
    assert [r["group_id"] for r in h.shard.list_groups(types_filter=("consumer",))[1]] == ["cg"]
    assert [r["group_id"] for r in h.shard.list_groups(types_filter=("Classic",))[1]] == ["classic"]
    assert [r["group_id"] for r in h.shard.list_groups(states_filter=("stable",))[1]] == ["cg", "classic"]
    h.cg_join("cg", "m2")
    assert [r["group_id"] for r in h.shard.list_groups(states_filter=("Reconciling",))[1]] == ["cg"]


def test_describe_groups_does_not_describe_a_consumer_group(h):
    h.cg_join("cg", "m1")
    v6 = h.shard.describe_group("cg", version=6)
    assert (v6["error_code"], v6["error_message"], v6["group_state"]) == (
        ErrorCode.group_id_not_found, "Group cg is not a classic group.", "Dead")
    v5 = h.shard.describe_group("cg", version=5)
    assert (v5["error_code"], v5["group_state"]) == (ErrorCode.none, "Dead")


def test_consumer_group_describe(h):
    h.cg_join("cg", "m1")
    d = h.shard.describe_consumer_group("cg")
    assert (d["error_code"], d["group_state"], d["group_epoch"], d["assignment_epoch"], d["assignor_name"]) == (
        ErrorCode.none, "Stable", 2, 2, "uniform")
    [m] = d["members"]
    assert m["member_id"] == "m1" and m["member_epoch"] == 2 and m["subscribed_topic_names"] == ["orders"]
    assert m["assignment"] == {"topic_partitions": [{"topic_id": topic_id("orders"), "topic_name": "orders",
                                                     "partitions": [0, 1, 2, 3, 4, 5]}]}
    assert m["target_assignment"] == m["assignment"]
    missing = h.shard.describe_consumer_group("nope")
    assert (missing["error_code"], missing["error_message"]) == (ErrorCode.group_id_not_found, "Group nope not found.")
    h.form_group("classic", "a")
    c = h.shard.describe_consumer_group("classic")
    assert (c["error_code"], c["error_message"]) == (ErrorCode.group_id_not_found, "Group classic is not a consumer group.")


def test_delete_groups_refuses_a_group_with_members_and_deletes_an_empty_one(h):
    h.cg_join("cg", "m1")
    h.commit("cg", {("orders", 0): 1}, generation=2, member_id="m1", version=9)
    assert h.delete_group("cg") == ErrorCode.non_empty_group
    h.cg("cg", "m1", -1)
    assert h.delete_group("cg") == ErrorCode.none
    assert "cg" not in h.shard.consumer_groups and "cg" not in h.shard.groups
    assert h.committed("cg") == {}
    h.restart()
    assert "cg" not in h.shard.consumer_groups and h.committed("cg") == {}


def test_offsets_of_an_empty_consumer_group_expire_and_the_group_goes(h):
    h.cg_join("cg", "m1")
    h.commit("cg", {("payments", 0): 3}, generation=2, member_id="m1", version=9)
    h.commit("cg", {("orders", 0): 3}, generation=2, member_id="m1", version=9)
    for _ in range(4):  # 80 s: past the one-minute retention, the member heartbeating all along
        h.advance(20_000)
        assert h.cg("cg", "m1", 2)["error_code"] == ErrorCode.none
    # Still a member subscribed to orders: only the offsets of the unsubscribed topic expire.
    assert h.committed("cg") == {("orders", 0): 3}
    h.cg("cg", "m1", -1)
    assert "cg" in h.shard.consumer_groups
    h.advance(20_000)
    assert h.committed("cg") == {}
    assert "cg" not in h.shard.consumer_groups


def test_consumer_groups_are_seen_by_metrics_views(h):
    from groupcoord.coordinator.groups.views import consumer_group_view

    h.cg_join("cg", "m1")
    h.commit("cg", {("orders", 0): 1}, generation=2, member_id="m1", version=9)
    view = consumer_group_view(h.cg_group("cg"))
    assert (view.state, view.protocol_type, view.generation, view.num_offsets) == ("Stable", "consumer", 2, 1)
    assert [m.member_id for m in view.members] == ["m1"]
