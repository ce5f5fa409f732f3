"""ConsumerGroupHeartbeat errors, with Kafka's codes and messages: validation, fencing, unknown members, limits."""

import pytest

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness, subscription


@pytest.fixture
def h() -> Harness:
    return Harness(FakeTopics(orders=6), group_consumer_max_size=2)


def err(r):
    return r["error_code"], r["error_message"]


def test_request_validation_messages(h):
    bad = ErrorCode.invalid_request
    assert err(h.cg("g", "", 0, topics=("orders",), owned={}, rebalance=1000)) == (bad, "MemberId can't be empty.")
    assert err(h.cg("g", "m", 1)) == (ErrorCode.group_id_not_found, "Consumer group g not found.")
    assert err(h.cg(" ", "m", 0, topics=("orders",), owned={}, rebalance=1000)) == (bad, "GroupId can't be empty.")
    assert err(h.cg("g", "m", 0, topics=("orders",), owned={})) == (bad, "RebalanceTimeoutMs must be provided in first request.")
    assert err(h.cg("g", "m", 0, topics=("orders",), rebalance=1000)) == (bad, "TopicPartitions must be empty when (re-)joining.")
    assert err(h.cg("g", "m", 0, topics=("orders",), owned={"orders": [0]}, rebalance=1000)) == (
        bad, "TopicPartitions must be empty when (re-)joining.")
    assert err(h.cg("g", "m", 0, owned={}, rebalance=1000)) == (
        bad, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    assert err(h.cg("g", "m", -2)) == (bad, "InstanceId can't be null.")
    assert err(h.cg("g", "m", -3)) == (bad, "MemberEpoch is invalid.")
    assert err(h.cg("g", "m", 0, topics=("orders",), owned={}, rebalance=1000, instance=" ")) == (bad, "InstanceId can't be empty.")
    assert err(h.cg("g", "m", 0, topics=("orders",), owned={}, rebalance=1000, assignor="sticky")) == (
        ErrorCode.unsupported_assignor, "ServerAssignor sticky is not supported. Supported assignors: uniform, range.")
    assert "g" not in h.shard.consumer_groups  # nothing was created by a refused request


def test_v0_lets_the_coordinator_generate_the_member_id(h):
    r = h.cg("g", "", 0, topics=("orders",), owned={}, rebalance=1000, version=0)
    assert r["error_code"] == ErrorCode.none
    assert len(r["member_id"]) == 22 and r["member_id"] in h.cg_group("g").members  # a Kafka Uuid string
    assert err(h.cg("g", "", 1, version=0)) == (ErrorCode.invalid_request, "MemberId can't be empty.")


def test_unknown_group_and_unknown_member(h):
    assert err(h.cg("nope", "m", 3)) == (ErrorCode.group_id_not_found, "Consumer group nope not found.")
    assert err(h.cg("nope", "m", -1)) == (ErrorCode.group_id_not_found, "Group nope not found.")
    h.cg_join("g", "m1")
    assert err(h.cg("g", "ghost", 1)) == (ErrorCode.unknown_member_id, "Member ghost is not a member of group g.")
    assert err(h.cg("g", "ghost", -1)) == (ErrorCode.unknown_member_id, "Member ghost is not a member of group g.")


def test_fenced_epochs(h):
    h.cg_join("g", "m1")
    r = h.cg("g", "m1", 5)
    assert err(r) == (ErrorCode.fenced_member_epoch,
                      "The consumer group member has a greater member epoch (5) than the one known by the group "
                      "coordinator (2). The member must abandon all its partitions and rejoin.")
    h.cg_join("g", "m2")
    h.cg("g", "m1", 2, owned={"orders": [0, 1, 2, 3, 4, 5]})  # told to revoke half
    kept = sorted(h.cg_group("g").members["m1"].assigned[next(iter(h.cg_group("g").members["m1"].assigned))])
    h.cg("g", "m1", 2, owned={"orders": kept})  # now at epoch 3, previous epoch 2
    assert h.cg_group("g").members["m1"].member_epoch == 3
    # The response that moved it to epoch 3 was lost: epoch 2 with a subset of its assignment is accepted.
    assert h.cg("g", "m1", 2, owned={"orders": kept})["error_code"] == ErrorCode.none
    # ...but not with partitions it no longer has, nor without saying what it owns, nor an older epoch.
    assert h.cg("g", "m1", 2, owned={"orders": [0, 1, 2, 3, 4, 5]})["error_code"] == ErrorCode.fenced_member_epoch
    assert h.cg("g", "m1", 2)["error_code"] == ErrorCode.fenced_member_epoch
    assert h.cg("g", "m1", 1, owned={"orders": kept})["error_code"] == ErrorCode.fenced_member_epoch
    assert err(h.cg("g", "m1", 0, topics=("orders",), owned={}, rebalance=1000)) == (
        ErrorCode.fenced_member_epoch,
        "The consumer group member has a smaller member epoch (0) than the one known by the group coordinator (3). "
        "The member must abandon all its partitions and rejoin.")


def test_the_group_max_size(h):
    h.cg_join("g", "m1")
    h.cg_join("g", "m2")
    assert err(h.cg_join("g", "m3")) == (ErrorCode.group_max_size_reached,
                                         "The consumer group has reached its maximum capacity of 2 members.")
    assert h.cg("g", "m1", 2)["error_code"] == ErrorCode.none  # existing members are not refused


def test_a_classic_group_with_members_is_not_a_consumer_group(h):
    h.form_group("classic", "a", protocols=(("range", subscription("orders")),))
    assert err(h.cg_join("classic", "m1")) == (
        ErrorCode.group_id_not_found, "Cannot upgrade classic group classic to consumer group because online upgrade is disabled.")
    assert err(h.cg("classic", "m1", 3)) == (ErrorCode.group_id_not_found, "Group classic is not a consumer group.")
    assert "classic" in h.shard.groups and "classic" not in h.shard.consumer_groups


def test_an_empty_classic_group_gives_way_and_its_offsets_stay(h):
    assert h.commit("g", {("orders", 0): 42}) == {("orders", 0): ErrorCode.none}
    r = h.cg_join("g", "m1")
    assert r["error_code"] == ErrorCode.none
    assert "g" not in h.shard.groups
    assert h.committed("g") == {("orders", 0): 42}


def test_an_invalid_regex_is_refused(h):
    r = h.cg("g", "m", 0, regex="[", owned={}, rebalance=1000)
    assert r["error_code"] == ErrorCode.invalid_regular_expression
    assert r["error_message"].startswith("SubscribedTopicRegex `[` is not a valid regular expression: ")
    assert "g" not in h.shard.consumer_groups
