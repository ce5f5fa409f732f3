"""KIP-848 timers (session expiry, rebalance-timeout fencing) and the records: a restarted shard has the same groups."""

import pytest

from groupcoord.coordinator.groups.consumer.member import MemberState
from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import decode_record
from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id

ORDERS = topic_id("orders")


@pytest.fixture
def h() -> Harness:
    return Harness(FakeTopics(orders=6), group_consumer_session_timeout_ms=45_000)


def kinds(h, since: int) -> list[tuple[str, bool]]:
    """(record type, is tombstone) of the log records written since index ``since``."""
    out = []
    for k, v in h.log[since:]:
        key, value = decode_record(k, v)
        out.append((type(key).__name__, value is None))
    return out


def test_a_join_writes_kafkas_records_in_kafkas_order(h):
    h.cg_join("g", "m1")
    assert kinds(h, 0) == [
        ("ConsumerGroupMemberMetadataKey", False),
        ("ConsumerGroupMetadataKey", False),
        ("ConsumerGroupTargetAssignmentMemberKey", False),
        ("ConsumerGroupTargetAssignmentMetadataKey", False),
        ("ConsumerGroupCurrentMemberAssignmentKey", False),
    ]


def test_a_leave_writes_tombstones_then_bumps_the_epoch(h):
    h.cg_join("g", "m1")
    mark = len(h.log)
    h.cg("g", "m1", -1)
    assert kinds(h, mark) == [
        ("ConsumerGroupCurrentMemberAssignmentKey", True),
        ("ConsumerGroupTargetAssignmentMemberKey", True),
        ("ConsumerGroupMemberMetadataKey", True),
        ("ConsumerGroupMetadataKey", False),
    ]


def test_a_silent_member_is_removed_after_its_session_timeout(h):
    h.cg_join("g", "m1")
    h.cg_join("g", "m2")
    h.advance(30_000)
    h.cg("g", "m1", 2)  # m1 keeps its session alive; m2 stays silent
    h.advance(15_001)
    group = h.cg_group("g")
    assert set(group.members) == {"m1"}
    assert group.group_epoch == 4
    assert ("expired", "g", "m2") in h.observer.events
    h.advance(30_000)
    assert set(group.members) == set()  # m1 went silent as well


def test_a_member_that_does_not_revoke_in_time_is_fenced(h):
    h.cg_join("g", "m1", rebalance=10_000)
    h.cg_join("g", "m2")
    h.cg("g", "m1", 2)  # told to revoke
    assert h.cg_group("g").members["m1"].state is MemberState.UNREVOKED_PARTITIONS
    h.advance(5_000)
    h.cg("g", "m1", 2)  # heartbeats but keeps owning what it must revoke (no owned list)
    h.advance(5_001)
    assert "m1" not in h.cg_group("g").members
    r = h.cg("g", "m1", 2)
    assert r["error_code"] == ErrorCode.unknown_member_id
    # m2 can now have every partition.
    r2 = h.cg("g", "m2", 3)
    assert r2["member_epoch"] == 4
    assert {tp["topic_id"]: sorted(tp["partitions"]) for tp in r2["assignment"]["topic_partitions"]} == {ORDERS: list(range(6))}


def test_revoking_in_time_cancels_the_rebalance_timeout(h):
    h.cg_join("g", "m1", rebalance=10_000)
    h.cg_join("g", "m2")
    h.cg("g", "m1", 2)
    kept = sorted(next(iter(h.cg_group("g").members["m1"].assigned.values())))
    h.cg("g", "m1", 2, owned={"orders": kept})
    h.advance(10_001)
    h.cg("g", "m2", 3)
    h.advance(10_000)
    assert set(h.cg_group("g").members) == {"m1", "m2"}


def snapshot(shard):
    return {
        gid: (
            g.group_epoch, g.assignment_epoch, g.state.value, dict(g.target), dict(g.partition_epochs), dict(g.offsets),
            {mid: (m.member_epoch, m.previous_member_epoch, m.state, m.assigned, m.pending_revocation,
                   m.subscribed_topic_names, m.rebalance_timeout_ms, m.client_id, m.server_assignor)
             for mid, m in g.members.items()},
        )
        for gid, g in shard.consumer_groups.items()
    }


def test_a_restarted_shard_replays_the_same_consumer_groups(h):
    h.commit("g", {("orders", 1): 7})
    h.cg_join("g", "m1")
    h.cg_join("g", "m2", assignor="range")
    h.cg("g", "m1", 2)  # mid-rebalance: m1 has partitions pending revocation, m2 waits for them
    h.cg_join("other", "x")
    h.cg("other", "x", -1)
    before = snapshot(h.shard)
    assert before["g"][2] == "Reconciling"
    h.restart()
    assert snapshot(h.shard) == before
    # The restarted shard goes on from there: m1 revokes and m2 gets its partitions.
    kept = sorted(next(iter(h.cg_group("g").members["m1"].assigned.values())))
    assert h.cg("g", "m1", 2, owned={"orders": kept})["member_epoch"] == 3
    assert h.cg("g", "m2", 3)["assignment"] is not None


def test_after_a_restart_members_get_a_full_session(h):
    h.cg_join("g", "m1")
    h.advance(40_000)
    h.restart()
    h.advance(40_000)
    assert "m1" in h.cg_group("g").members
    h.advance(5_001)
    assert "m1" not in h.cg_group("g").members
