"""Kafka 4.3's assignment batching (group.consumer.assignment.interval.ms, default 1000 ms), as its
GroupMetadataManager.maybeUpdateTargetAssignment does it: a heartbeat that finds the group epoch ahead of the
target computes a new target only when the interval since the last computation (the timestamp the target's
metadata record carries) has passed; otherwise the group stays Assigning and the member reconciles towards the
target the group has. The first heartbeat after the interval computes one target for every bump in between.
No timer does it: a group nobody heartbeats in stays Assigning, as in Kafka 4.3.1."""

import pytest

from groupcoord.coordinator.config import BrokerConfig, resolve
from groupcoord.coordinator.dataplane.group_configs import GroupConfigSource
from groupcoord.coordinator.groups.consumer.assignment import can_compute_next_target_assignment
from groupcoord.coordinator.groups.offsets_records import (
    ConsumerGroupTargetAssignmentMetadataValue,
    decode_record,
)
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness


def partitions_of(response: dict) -> list[int] | None:
    if response["assignment"] is None:
        return None
    return sorted(p for tp in response["assignment"]["topic_partitions"] for p in tp["partitions"])


def target_metadata(h: Harness) -> list[ConsumerGroupTargetAssignmentMetadataValue]:
    """The target-assignment metadata records written so far (record type 6), one per computation."""
    out = []
    for key, value in h.log:
        if key[:2] == b"\x00\x06" and value is not None:
            out.append(decode_record(key, value)[1])
    return out


def test_the_broker_default_is_kafkas_one_second_and_negative_is_refused():
    assert BrokerConfig().group_consumer_assignment_interval_ms == 1000
    assert BrokerConfig().group_consumer_min_assignment_interval_ms == 0
    assert BrokerConfig().group_consumer_max_assignment_interval_ms == 15000
    for name in ("ASSIGNMENT_INTERVAL_MS", "MIN_ASSIGNMENT_INTERVAL_MS", "MAX_ASSIGNMENT_INTERVAL_MS"):
        with pytest.raises(ValueError, match="between 0 and"):  # Kafka's atLeast(0)
            resolve(env={f"GROUPCOORD_GROUP_CONSUMER_{name}": "-1"})


def test_joins_within_the_interval_share_one_target_computed_by_the_first_heartbeat_after_it():
    h = Harness(FakeTopics(orders=6), group_consumer_assignment_interval_ms=1000)
    first = h.cg_join("g", "m-1")
    assert first["error_code"] == ErrorCode.none and partitions_of(first) == [0, 1, 2, 3, 4, 5]
    computed = target_metadata(h)
    assert [(v.assignment_epoch, v.assignment_timestamp) for v in computed] == [(2, h.now)]  # a new group: at once
    stamped = h.now

    h.advance(10)
    later = {m: h.cg_join("g", m) for m in ("m-2", "m-3")}
    group = h.cg_group("g")
    assert group.group_epoch == 4 and group.assignment_epoch == 2 and group.state.value == "Assigning"
    for answer in later.values():  # the target the group has: nothing yet, at the assignment's epoch
        assert answer["error_code"] == ErrorCode.none
        assert answer["member_epoch"] == 2 and partitions_of(answer) == []
    assert len(target_metadata(h)) == 1

    h.advance(979)  # 999 ms after the computation: still within the interval, and nothing fires on its own
    still = h.cg("g", "m-1", first["member_epoch"])
    assert still["member_epoch"] == 2 and still["assignment"] is None
    assert len(target_metadata(h)) == 1
    h.advance(5_000)  # no timer: with nobody heartbeating the group stays Assigning
    assert len(target_metadata(h)) == 1 and group.state.value == "Assigning"

    # The next heartbeat of any member computes one target for both joins, and that member moves on.
    revoking = h.cg("g", "m-2", 2, owned={"orders": []})
    computed = target_metadata(h)
    assert [(v.assignment_epoch, v.assignment_timestamp) for v in computed] == [(2, stamped), (4, h.now)]
    assert group.assignment_epoch == group.group_epoch == 4
    assert sorted(sum(len(ps) for ps in t.values()) for t in group.target.values()) == [2, 2, 2]
    # m-2 is at the new epoch, its two partitions withheld while m-1 still owns them (UNRELEASED_PARTITIONS).
    assert revoking["member_epoch"] == 4 and not partitions_of(revoking)

    kept = h.cg("g", "m-1", 2, owned={"orders": [0, 1, 2, 3, 4, 5]})
    assert len(partitions_of(kept)) == 2
    settled = h.cg("g", "m-1", kept["member_epoch"], owned={"orders": partitions_of(kept)})
    assert settled["error_code"] == ErrorCode.none and settled["member_epoch"] == 4
    others = [h.cg("g", "m-2", 4, owned={"orders": []}), h.cg("g", "m-3", 2, owned={"orders": []})]
    assert sorted(partitions_of(kept) + [p for r in others for p in partitions_of(r)]) == [0, 1, 2, 3, 4, 5]
    assert len(target_metadata(h)) == 2  # reconciling wrote no further target


def test_a_leave_within_the_interval_waits_for_it_too():
    """Fencing a member bumps the epoch only; the target follows in a heartbeat after the interval."""
    h = Harness(FakeTopics(orders=4), group_consumer_assignment_interval_ms=1000)
    a = h.cg_join("g", "a")
    h.advance(1000)
    b = h.cg_join("g", "b")  # the interval has passed: computed at once
    assert len(target_metadata(h)) == 2
    h.advance(100)
    assert h.cg("g", "b", -1)["error_code"] == ErrorCode.none
    group = h.cg_group("g")
    assert group.group_epoch == 4 and group.assignment_epoch == 3 and set(group.target) == {"a"}
    h.advance(400)
    h.cg("g", "a", a["member_epoch"])
    assert group.assignment_epoch == 3
    h.advance(500)  # 1,000 ms after b's join computed
    h.cg("g", "a", a["member_epoch"])
    assert group.assignment_epoch == 4 and sum(len(ps) for ps in group.target["a"].values()) == 4
    assert b["member_epoch"] == 3


def test_at_zero_every_epoch_bump_computes_in_the_heartbeat():
    h = Harness(FakeTopics(orders=6))
    assert h.config.group_consumer_assignment_interval_ms == 0  # the scenarios' harness, as Kafka was recorded
    h.cg_join("g", "m-1")
    h.cg_join("g", "m-2")
    group = h.cg_group("g")
    assert len(target_metadata(h)) == 2 and group.assignment_epoch == group.group_epoch


def test_the_timestamp_survives_a_restart_so_the_wait_does_too():
    """Kafka replays assignmentTimestamp from the record: a reloaded coordinator keeps the interval."""
    h = Harness(FakeTopics(orders=4), group_consumer_assignment_interval_ms=1000)
    h.cg_join("g", "m-1")
    h.advance(10)
    joined = h.cg_join("g", "m-2")
    h.restart()
    group = h.cg_group("g")
    assert group.group_epoch == 3 and group.assignment_epoch == 2
    assert group.assignment_timestamp == target_metadata(h)[0].assignment_timestamp == h.now - 10
    early = h.cg("g", "m-2", joined["member_epoch"], owned={"orders": []})
    assert early["error_code"] == ErrorCode.none and group.assignment_epoch == 2
    h.advance(990)
    h.cg("g", "m-2", joined["member_epoch"], owned={"orders": []})
    assert group.assignment_epoch == group.group_epoch == 3


def test_a_group_config_sets_its_own_interval():
    """consumer.assignment.interval.ms on the group (IncrementalAlterConfigs on GROUP) overrides the broker's."""
    overrides = {"eager": {"consumer.assignment.interval.ms": "0"}}
    h = Harness(FakeTopics(orders=4), group_consumer_assignment_interval_ms=1000)
    h.shard.state.group_configs = GroupConfigSource(h.config, lambda group_id: overrides.get(group_id, {}))
    for gid in ("eager", "plain"):
        h.cg_join(gid, f"{gid}-1")
        h.cg_join(gid, f"{gid}-2")
    assert h.cg_group("eager").assignment_epoch == h.cg_group("eager").group_epoch == 3
    assert h.cg_group("plain").assignment_epoch == 2 and h.cg_group("plain").group_epoch == 3


def test_the_rule_itself():
    """canComputeNextTargetAssignment: no timestamp or a zero interval compute at once (the latter also
    when the wall clock went back), else from the timestamp plus the interval on."""
    assert can_compute_next_target_assignment(0, 1000, 5)
    assert can_compute_next_target_assignment(10_000, 0, 5)
    assert not can_compute_next_target_assignment(10_000, 1000, 10_999)
    assert can_compute_next_target_assignment(10_000, 1000, 11_000)
