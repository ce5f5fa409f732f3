"""Classic-protocol requests naming a consumer group: LeaveGroup removes its members, SyncGroup is refused, a
JoinGroup turns an empty consumer group back into a classic group and is refused while it has members."""

import pytest

from groupcoord.coordinator.groups.lazy_requests import LeavingMember
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness


@pytest.fixture
def h() -> Harness:
    return Harness(FakeTopics(orders=2))


def test_leave_group_removes_consumer_protocol_members(h):
    h.cg_join("g", "a")
    h.cg_join("g", "b", instance="inst-b")
    r = h.leave("g", "a", LeavingMember("ghost"), LeavingMember("a", "inst-b"), LeavingMember("", "inst-b"))
    assert r["error_code"] == ErrorCode.none
    assert [m["error_code"] for m in r["members"]] == [
        ErrorCode.none, ErrorCode.unknown_member_id, ErrorCode.fenced_instance_id, ErrorCode.none]
    group = h.cg_group("g")
    assert group.members == {} and group.group_epoch == 5


def test_sync_and_heartbeat_of_the_classic_protocol_are_refused(h):
    h.cg_join("g", "a")
    assert h.sync("g", "a", 2).error == ErrorCode.inconsistent_group_protocol
    assert h.heartbeat("g", "a", 2) == ErrorCode.unknown_member_id


def test_a_classic_join_is_refused_while_the_consumer_group_has_members(h):
    h.cg_join("g", "a")
    assert h.join("g").error == ErrorCode.inconsistent_group_protocol
    assert "g" in h.shard.consumer_groups and "g" not in h.shard.groups


def test_a_classic_join_turns_an_empty_consumer_group_into_a_classic_group_keeping_offsets(h):
    h.cg_join("g", "a")
    h.commit("g", {("orders", 0): 9}, generation=2, member_id="a", version=9)
    h.cg("g", "a", -1)
    ids = h.form_group("g", "c")
    assert "g" not in h.shard.consumer_groups
    assert h.state("g") == "Stable" and list(h.group("g").members) == [ids["c"]]
    assert h.committed("g") == {("orders", 0): 9}
    h.restart()
    assert "g" not in h.shard.consumer_groups and h.committed("g") == {("orders", 0): 9}
    assert h.shard.describe_consumer_group("g")["error_message"] == "Group g is not a consumer group."
