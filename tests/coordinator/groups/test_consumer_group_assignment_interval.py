"""Kafka 4.3's assignment batching (group.consumer.assignment.interval.ms): epoch bumps within the interval share
one target assignment, computed by a timer at its end; meanwhile the group is Assigning and members reconcile
towards the target they have. With the interval at 0 every bump computes at once (the default here)."""

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness


def partitions_of(response: dict) -> list[int] | None:
    if response["assignment"] is None:
        return None
    return sorted(p for tp in response["assignment"]["topic_partitions"] for p in tp["partitions"])


def target_writes(h: Harness) -> int:
    """Target-assignment epoch records written so far (record type 6), one per computation."""
    return sum(1 for key, value in h.log if key[:2] == b"\x00\x06" and value is not None)


def test_joins_within_the_interval_share_one_target_assignment():
    h = Harness(FakeTopics(orders=6), group_consumer_assignment_interval_ms=1000)
    first = h.cg_join("g", "m-1")
    assert first["error_code"] == ErrorCode.none and partitions_of(first) == [0, 1, 2, 3, 4, 5]
    assert target_writes(h) == 1  # the first bump of a loaded group computes at once

    h.advance(10)
    later = [h.cg_join("g", f"m-{i}") for i in (2, 3)]
    assert all(r["error_code"] == ErrorCode.none and partitions_of(r) == [] for r in later)
    group = h.cg_group("g")
    assert group.group_epoch > group.assignment_epoch and group.state.value == "Assigning"
    assert target_writes(h) == 1  # deferred: the heartbeats did not wait for the assignor

    h.advance(1000)  # the interval ends: one computation for both joins
    assert target_writes(h) == 2
    assert group.assignment_epoch == group.group_epoch
    assert {sum(len(ps) for ps in target.values()) for target in group.target.values()} == {2}

    # The first member learns of its revocations in its next heartbeat; then the others get theirs.
    revoked = h.cg("g", "m-1", first["member_epoch"], owned={"orders": [0, 1, 2, 3, 4, 5]})
    assert len(partitions_of(revoked)) == 2
    kept = partitions_of(revoked)
    settled = h.cg("g", "m-1", revoked["member_epoch"], owned={"orders": kept})
    assert settled["error_code"] == ErrorCode.none
    others = {m: h.cg("g", m, r["member_epoch"], owned={"orders": []}) for m, r in zip(("m-2", "m-3"), later)}
    got = sorted(kept + [p for r in others.values() for p in partitions_of(r) or []])
    assert got == [0, 1, 2, 3, 4, 5]


def test_at_zero_every_epoch_bump_computes_in_the_heartbeat():
    h = Harness(FakeTopics(orders=6))
    assert h.config.group_consumer_assignment_interval_ms == 0
    h.cg_join("g", "m-1")
    h.cg_join("g", "m-2")
    group = h.cg_group("g")
    assert target_writes(h) == 2 and group.assignment_epoch == group.group_epoch


def test_a_deferred_assignment_survives_nothing_but_is_redone_after_a_restart():
    """The timer is in memory: after a reload the next heartbeat of a group still behind computes at once."""
    h = Harness(FakeTopics(orders=4), group_consumer_assignment_interval_ms=1000)
    h.cg_join("g", "m-1")
    h.advance(10)
    joined = h.cg_join("g", "m-2")
    h.restart()
    group = h.cg_group("g")
    assert group.group_epoch > group.assignment_epoch
    answer = h.cg("g", "m-2", joined["member_epoch"], owned={"orders": []})
    assert answer["error_code"] == ErrorCode.none
    assert group.assignment_epoch == group.group_epoch
