"""ShareGroupHeartbeat as Kafka 4.3 answers it: a member joins at epoch 0, gets partitions once their
share-partition state is initialised, leaves with -1; errors and their messages as GroupMetadataManager's."""

import pytest

from groupcoord.coordinator.groups.offsets_records import decode_record
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.share.harness import ORDERS, PAYMENTS, FakeTopics, ShareHarness


@pytest.fixture
def h() -> ShareHarness:
    return ShareHarness(FakeTopics(orders=6, payments=2))


def kinds(h, since: int = 0) -> list[tuple[str, bool]]:
    out = []
    for k, v in h.log[since:]:
        key, value = decode_record(k, v)
        out.append((type(key).__name__, value is None))
    return out


def test_first_heartbeat_joins_with_an_empty_assignment_then_the_next_one_gets_every_partition(h):
    first = h.sg_join("g", "m1")
    assert first["error_code"] == ErrorCode.none
    assert first["member_id"] == "m1"
    assert first["member_epoch"] == 2
    assert first["heartbeat_interval"] == 5000
    assert h.assigned(first) == {}
    # the partitions were written as initializing, then initialised (the persister answered)
    info = h.sg_group("g").partitions
    assert info.initialized == {ORDERS: ("orders", frozenset(range(6)))} and not info.initializing
    second = h.sg("g", "m1", 2)
    assert second["member_epoch"] == 3
    assert h.assigned(second) == {ORDERS: [0, 1, 2, 3, 4, 5]}
    third = h.sg("g", "m1", 3)
    assert third["member_epoch"] == 3 and third["assignment"] is None


def test_a_join_writes_kafkas_records_in_kafkas_order(h):
    h.sg_join("g", "m1")
    assert kinds(h) == [
        ("ShareGroupMemberMetadataKey", False),
        ("ShareGroupMetadataKey", False),
        ("ShareGroupTargetAssignmentMemberKey", False),
        ("ShareGroupTargetAssignmentMetadataKey", False),
        ("ShareGroupCurrentMemberAssignmentKey", False),
        ("ShareGroupStatePartitionMetadataKey", False),  # initializing
        ("ShareGroupStatePartitionMetadataKey", False),  # initialized
    ]


def test_nothing_is_assigned_while_the_state_is_not_initialised():
    h = ShareHarness(FakeTopics(orders=3), auto_initialize=False)
    h.sg_join("g", "m1")
    assert h.sg_group("g").partitions.initializing == {ORDERS: ("orders", frozenset({0, 1, 2}))}
    again = h.sg("g", "m1", 2)
    assert again["member_epoch"] == 2 and again["assignment"] is None
    h.initialize_pending(ok=False)  # the persister failed: no longer initializing
    assert h.sg_group("g").partitions.initializing == {}
    h.sg("g", "m1", 2)  # asks again
    h.initialize_pending()
    assert h.assigned(h.sg("g", "m1", 2)) == {ORDERS: [0, 1, 2]}


def test_two_members_split_six_partitions_three_each_and_never_overlap(h):
    h.sg_join("g", "m1")
    h.sg("g", "m1", 2)
    h.sg_join("g", "m2")
    a = h.sg("g", "m1", 3)
    b = h.sg("g", "m2", h.sg_group("g").members["m2"].member_epoch)
    ga, gb = h.sg_group("g").members["m1"].assigned, h.sg_group("g").members["m2"].assigned
    assert len(ga[ORDERS]) == 3 and len(gb[ORDERS]) == 3
    assert not ga[ORDERS] & gb[ORDERS]
    assert a["error_code"] == b["error_code"] == ErrorCode.none


def test_three_members_on_two_partitions_share_them():
    h = ShareHarness(FakeTopics(orders=2))
    for m in ("m1", "m2", "m3"):
        h.sg_join("g", m)
    for m in ("m1", "m2", "m3"):
        h.sg("g", m, h.sg_group("g").members[m].member_epoch)
    held = [h.sg_group("g").members[m].assigned.get(ORDERS, frozenset()) for m in ("m1", "m2", "m3")]
    # sharing = ceil(3/2) = 2: each partition is held by two members, each member holds at least one
    assert all(held)
    assert sorted(sum(p in ps for ps in held) for p in (0, 1)) == [2, 2]


def test_a_subscription_change_moves_the_member_to_the_new_topic(h):
    h.sg_join("g", "m1")
    h.sg("g", "m1", 2)
    r = h.sg("g", "m1", 3, topics=["payments"])
    assert r["member_epoch"] == 4
    assert h.assigned(r) == {}  # payments is initialising
    r = h.sg("g", "m1", 4)
    assert h.assigned(r) == {PAYMENTS: [0, 1]}


def test_leave_tombstones_the_member_and_bumps_the_epoch(h):
    h.sg_join("g", "m1")
    mark = len(h.log)
    r = h.sg("g", "m1", -1)
    assert r["error_code"] == ErrorCode.none and r["member_epoch"] == -1 and r["member_id"] == "m1"
    assert kinds(h, mark) == [
        ("ShareGroupCurrentMemberAssignmentKey", True),
        ("ShareGroupTargetAssignmentMemberKey", True),
        ("ShareGroupMemberMetadataKey", True),
        ("ShareGroupMetadataKey", False),
    ]
    assert h.sg_describe("g")["group_state"] == "Empty"


def test_session_timeout_fences_a_silent_member(h):
    h.sg_join("g", "m1")
    h.sg_join("g", "m2")
    h.advance(30_000)
    h.sg("g", "m1", h.sg_group("g").members["m1"].member_epoch)
    h.advance(15_001)
    assert set(h.sg_group("g").members) == {"m1"}
    assert ("expired", "g", "m2") in h.observer.events


@pytest.mark.parametrize("kwargs,message", [
    (dict(member_id="", epoch=0, topics=["orders"]), "MemberId can't be empty."),
    (dict(member_id="m", epoch=0, topics=None), "SubscribedTopicNames must be set in first request."),
    (dict(member_id="m", epoch=0, topics=[]), "SubscribedTopicNames must be set in first request."),
    (dict(member_id="m", epoch=-2, topics=None), "MemberEpoch is invalid."),
    (dict(member_id="m", epoch=0, topics=["orders"], rack=" "), "RackId can't be empty."),
])
def test_invalid_requests(h, kwargs, message):
    r = h.sg("g", kwargs.pop("member_id"), kwargs.pop("epoch"), **kwargs)
    assert (r["error_code"], r["error_message"]) == (ErrorCode.invalid_request, message)


def test_unknown_member_and_fenced_epochs(h):
    h.sg_join("g", "m1")
    assert h.sg("g", "nobody", 2)["error_code"] == ErrorCode.unknown_member_id
    r = h.sg("g", "m1", 7)
    assert r["error_code"] == ErrorCode.fenced_member_epoch
    assert r["error_message"].startswith("The share group member has a greater member epoch (7)")
    h.sg("g", "m1", 2)  # now at epoch 3, previous 2
    assert h.sg("g", "m1", 2)["error_code"] == ErrorCode.none  # the previous epoch is accepted
    r = h.sg("g", "m1", 1)
    assert r["error_code"] == ErrorCode.fenced_member_epoch and "does not match the previous member epoch" in r["error_message"]
    assert h.sg("missing", "m1", 3)["error_code"] == ErrorCode.group_id_not_found
    r = h.sg("missing", "m1", -1)
    assert (r["error_code"], r["error_message"]) == (ErrorCode.group_id_not_found, "Group missing not found.")


def test_group_max_size():
    h = ShareHarness(FakeTopics(orders=1), group_share_max_size=2)
    h.sg_join("g", "m1")
    h.sg_join("g", "m2")
    r = h.sg_join("g", "m3")
    assert (r["error_code"], r["error_message"]) == (
        ErrorCode.group_max_size_reached, "The share group has reached its maximum capacity of 2 members.")


def test_a_group_id_has_one_type(h):
    h.cg_join("consumers", "c1")
    r = h.sg_join("consumers", "m1")
    assert (r["error_code"], r["error_message"]) == (ErrorCode.group_id_not_found, "Group consumers is not a share group.")
    h.sg_join("shared", "m1")
    r = h.cg_join("shared", "c1")
    assert (r["error_code"], r["error_message"]) == (ErrorCode.group_id_not_found, "Group shared is not a consumer group.")
    assert h.join("shared").error == ErrorCode.inconsistent_group_protocol
    assert h.commit("shared", {("orders", 0): 5}) == {("orders", 0): ErrorCode.group_id_not_found}
    fetched = h.fetch("shared", (("orders", (0,)),))
    assert fetched["error_code"] == ErrorCode.none  # Kafka: every partition -1, no error
    assert [p["committed_offset"] for t in fetched["topics"] for p in t["partitions"]] == [-1]


def test_a_restart_replays_the_same_group(h):
    h.sg_join("g", "m1")
    h.sg("g", "m1", 2)
    h.sg_join("g", "m2")
    before = h.sg_describe("g")
    h.restart()
    assert h.sg_describe("g") == before
    assert h.sg_group("g").partitions.initialized == {ORDERS: ("orders", frozenset(range(6)))}


def test_partitions_added_to_a_subscribed_topic_are_initialised_and_assigned(h):
    h.sg_join("g", "m1")
    assert h.assigned(h.sg("g", "m1", 2)) == {ORDERS: [0, 1, 2, 3, 4, 5]}
    h.topics.partitions["orders"] = 8  # CreatePartitions
    r = h.sg("g", "m1", 3)  # the metadata hash changed: epoch bump, partitions 6 and 7 initialised
    assert r["member_epoch"] == 4
    assert h.sg_group("g").partitions.initialized[ORDERS][1] == frozenset(range(8))
    assert h.assigned(h.sg("g", "m1", 4)) == {ORDERS: list(range(8))}


def test_a_subscription_to_a_missing_topic_waits_for_it(h):
    r = h.sg_join("g", "m1", topics=("later",))
    assert r["member_epoch"] == 2 and h.assigned(r) == {}
    assert h.sg_group("g").partitions is None
    h.topics.partitions["later"] = 2
    h.sg("g", "m1", 2)
    from tests.coordinator.groups.share.harness import topic_id
    assert h.assigned(h.sg("g", "m1", 3)) == {topic_id("later"): [0, 1]}


def test_a_deleted_topic_leaves_the_share_state_metadata_and_the_assignment(h):
    h.sg_join("g", "m1", topics=("orders", "payments"))
    h.sg("g", "m1", 2)
    del h.topics.partitions["payments"]  # DeleteTopics
    r = h.sg("g", "m1", 3)
    assert r["member_epoch"] == 4 and h.assigned(r) == {ORDERS: [0, 1, 2, 3, 4, 5]}
    assert set(h.sg_group("g").partitions.initialized) == {ORDERS}
    assert h.sg("g", "m1", 4)["member_epoch"] == 4  # no further bump: nothing is pending any more


def test_per_group_share_session_timeout_and_heartbeat_interval_apply(h):
    overrides = {("slow", "share.session.timeout.ms"): "60000", ("slow", "share.heartbeat.interval.ms"): "7000"}
    h.shard.state.group_config = lambda group_id, name: overrides.get((group_id, name))
    assert h.sg_join("slow", "m1")["heartbeat_interval"] == 7000
    assert h.sg_join("fast", "m1")["heartbeat_interval"] == 5000
    h.advance(50_000)  # past the broker's 45 s, within the group's 60 s
    assert set(h.sg_group("slow").members) == {"m1"} and not h.sg_group("fast").members
    h.advance(10_001)
    assert not h.sg_group("slow").members
