"""Heartbeat answers in every state, exactly where Kafka answers them."""

from groupcoord.coordinator.groups.requests import LeavingMember
from groupcoord.protocol.errors import ErrorCode


def test_a_stable_member_heartbeats_fine(h):
    ids = h.form_group("g", "a")
    assert h.heartbeat("g", ids["a"], 1) == ErrorCode.none


def test_heartbeat_errors(h):
    ids = h.form_group("g", "a", static=True)
    assert h.heartbeat("", ids["a"], 1) == ErrorCode.invalid_group_id
    assert h.heartbeat("unknown-group", "x", 1) == ErrorCode.unknown_member_id
    assert h.heartbeat("g", "ghost", 1) == ErrorCode.unknown_member_id
    assert h.heartbeat("g", ids["a"], 0) == ErrorCode.illegal_generation
    assert h.heartbeat("g", "old-incarnation", 1, instance="instance-a") == ErrorCode.fenced_instance_id
    assert h.heartbeat("g", ids["a"], 1, instance="i-unknown") == ErrorCode.unknown_member_id
    h.shard.begin_load()
    assert h.heartbeat("g", ids["a"], 1) == ErrorCode.coordinator_load_in_progress


def test_during_completing_rebalance_heartbeats_succeed(h):
    tickets = [h.join_new("g", client_id="a")]
    h.advance(3000)
    member = tickets[0].response["member_id"]
    assert h.state("g") == "CompletingRebalance"
    assert h.heartbeat("g", member, 1) == ErrorCode.none


def test_during_preparing_rebalance_heartbeats_say_rebalance_in_progress(h):
    ids = h.form_group("g", "a", "b")
    h.join("g", ids["a"], client_id="a")
    assert h.heartbeat("g", ids["b"], 1) == ErrorCode.rebalance_in_progress


def test_after_everyone_left_the_old_generation_is_illegal_and_the_member_unknown(h):
    ids = h.form_group("g", "a")
    h.leave("g", LeavingMember(ids["a"]))
    assert h.heartbeat("g", ids["a"], 1) == ErrorCode.unknown_member_id
