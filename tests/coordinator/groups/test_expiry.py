"""Session, join and sync timeouts in every state, on the fake clock."""

from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import Harness, subscription


def test_a_silent_stable_member_is_removed_after_its_session_timeout_and_the_group_rebalances(h):
    ids = h.form_group("g", "a", "b", session=10_000)
    for _ in range(2):
        h.advance(4_000)
        assert h.heartbeat("g", ids["a"], 1) == ErrorCode.none
    h.advance(4_000)  # b has been silent for 12 s
    assert h.heartbeat("g", ids["a"], 1) == ErrorCode.rebalance_in_progress
    assert h.state("g") == "PreparingRebalance"
    assert ("expired", "g", ids["b"]) in h.observer.events
    assert ids["b"] not in h.group("g").members


def test_a_lone_member_expiring_leaves_the_group_empty(h):
    ids = h.form_group("g", "a", session=10_000)
    h.advance(10_000)
    assert h.state("g") == "Empty" and not h.group("g").members
    assert h.heartbeat("g", ids["a"], 1) == ErrorCode.unknown_member_id


def test_heartbeats_keep_a_member_alive_indefinitely(h):
    ids = h.form_group("g", "a", session=10_000)
    for _ in range(20):
        h.advance(9_000)
        assert h.heartbeat("g", ids["a"], 1) == ErrorCode.none
    assert h.state("g") == "Stable"


def test_a_member_is_never_expired_while_its_join_group_is_parked(h):
    ids = h.form_group("g", "a", "b", session=10_000, rebalance=60_000)
    parked = h.join("g", ids["a"], client_id="a", session=10_000, rebalance=60_000)
    for _ in range(5):  # b heartbeats (REBALANCE_IN_PROGRESS) but does not rejoin for 50 s
        h.advance(9_000)
        h.heartbeat("g", ids["b"], 1)
    assert not parked.done and ids["a"] in h.group("g").members
    h.join("g", ids["b"], client_id="b", session=10_000, rebalance=60_000)
    assert parked.response["generation_id"] == 2


def test_a_member_is_never_expired_while_its_sync_group_is_parked(h):
    tickets = {c: h.join_new("g", client_id=c, session=10_000) for c in ("a", "b")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    leader, follower = tickets["a"].response["member_id"], tickets["b"].response["member_id"]
    parked = h.sync("g", follower, 1)
    for _ in range(2):  # the leader is slow to assign but keeps heartbeating
        h.advance(8_000)
        h.heartbeat("g", leader, 1)
    assert not parked.done and follower in h.group("g").members
    h.sync("g", leader, 1, [(follower, b"F")])
    assert parked.response["assignment"] == b"F"


def test_members_that_never_sync_after_the_join_phase_are_removed_and_the_group_rebalances(h):
    tickets = {c: h.join_new("g", client_id=c, session=60_000, rebalance=20_000) for c in ("a", "b")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    leader, silent = tickets["a"].response["member_id"], tickets["b"].response["member_id"]
    h.sync("g", leader, 1, [(leader, b"A"), (silent, b"B")])
    assert h.state("g") == "Stable"
    h.advance(20_000)  # the rebalance timeout after the join phase: b never sent SyncGroup
    assert silent not in h.group("g").members
    assert h.state("g") == "PreparingRebalance"


def test_a_member_timing_out_during_preparing_rebalance_lets_the_join_complete(h):
    ids = h.form_group("g", "a", "b", session=10_000, rebalance=60_000)
    a = h.join("g", ids["a"], client_id="a", session=10_000, rebalance=60_000)
    h.advance(10_000)  # b neither heartbeats nor rejoins: its session ends long before the rebalance timeout
    assert a.response["generation_id"] == 2 and a.response["members"] == [{"member_id": ids["a"], "group_instance_id": None, "metadata": subscription("orders")}]


def test_a_member_timing_out_during_completing_rebalance_is_removed_when_nobody_syncs():
    h = Harness()
    tickets = {c: h.join_new("g", client_id=c, session=10_000, rebalance=30_000) for c in ("a", "b")}
    h.advance_until(lambda: all(t.done for t in tickets.values()))
    assert h.state("g") == "CompletingRebalance"
    h.advance(10_000)  # nobody heartbeats or syncs
    assert h.state("g") in ("PreparingRebalance", "Empty")
    assert not h.group("g").members


def test_a_new_member_whose_first_join_is_parked_expires_after_five_minutes(h):
    ids = h.form_group("g", "a", "b", session=60_000, rebalance=900_000)
    parked = h.join("g", ids["a"], client_id="a", session=60_000, rebalance=900_000)  # rebalance in progress
    newcomer = h.join_new("g", client_id="n", session=60_000, rebalance=900_000)
    for _ in range(6):  # b stays alive but does not rejoin for five minutes
        h.advance(50_000)
        h.heartbeat("g", ids["b"], 1)
    assert newcomer.done and newcomer.error == ErrorCode.unknown_member_id
    assert not parked.done
    h.join("g", ids["b"], client_id="b", session=60_000, rebalance=900_000)
    assert parked.response["generation_id"] == 2 and len(parked.response["members"]) == 2


def test_a_member_told_member_id_required_that_never_returns_stops_blocking_the_rebalance(h):
    ids = h.form_group("g", "a", session=10_000, rebalance=60_000)
    h.join("g", client_id="flaky", session=10_000)  # gets an id, never comes back
    a = h.join("g", ids["a"], client_id="a", session=10_000, rebalance=60_000)
    assert h.state("g") == "PreparingRebalance" and h.group("g").pending_members
    assert not a.done  # a pending member holds up the join phase ...
    h.advance(10_000)  # ... until its session timeout
    assert a.response["generation_id"] == 2
