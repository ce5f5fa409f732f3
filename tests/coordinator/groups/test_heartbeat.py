"""Heartbeat answers in every state, exactly where Kafka answers them."""

from groupcoord.coordinator.groups.lazy_requests import LeavingMember
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


# ---------------------------------------------------------------- the frame loop's lane (beat_stable)


def test_the_lane_keeps_a_stable_member_alive_exactly_as_the_handler_does(h):
    from groupcoord.coordinator.groups.classic.heartbeat import beat_stable

    ids = h.form_group("g", "a", "b", session=10_000)
    for _ in range(5):
        h.advance(8_000)
        assert beat_stable(h.shard.state, "g", 1, ids["a"], h.now)  # a: only through the lane
        assert h.heartbeat("g", ids["b"], 1) == ErrorCode.none      # b: only through the handler
    assert h.state("g") == "Stable" and set(h.group("g").members) == {ids["a"], ids["b"]}
    timer = h.shard.state.timer
    assert timer._deadlines.deadline(("heartbeat", "g", ids["a"])) == timer._deadlines.deadline(("heartbeat", "g", ids["b"]))
    h.advance(10_001)  # both silent past their session: both expire, lane or not
    assert not h.group("g").members


def test_the_lane_leaves_every_other_case_to_the_handler_and_changes_nothing(h):
    from groupcoord.coordinator.groups.classic.heartbeat import beat_stable

    ids = h.form_group("g", "a", "b")
    state = h.shard.state
    assert not beat_stable(state, "g", 0, ids["a"], h.now)          # wrong generation
    assert not beat_stable(state, "g", 1, "ghost", h.now)           # unknown member
    assert not beat_stable(state, "nobody", 1, ids["a"], h.now)     # unknown group
    assert not beat_stable(state, "", 1, ids["a"], h.now)           # invalid group id
    h.join("g", ids["a"], client_id="a")                             # PreparingRebalance now
    assert not beat_stable(state, "g", 1, ids["b"], h.now)
    assert h.heartbeat("g", ids["b"], 1) == ErrorCode.rebalance_in_progress
    h.shard.begin_load()
    assert not beat_stable(state, "g", 1, ids["b"], h.now)


def test_extending_a_deadline_never_moves_it_earlier():
    from groupcoord.coordinator.groups.runtime.timers import TimerHeap

    heap = TimerHeap()
    assert not heap.extend("k", 100)  # not scheduled: nothing to extend
    heap.schedule("k", 100)
    assert heap.extend("k", 150) and heap.deadline("k") == 150
    assert heap.next_deadline() == 150
    assert not heap.extend("k", 50) and heap.deadline("k") == 150  # earlier would need a push: refused
    assert heap.pop_due(149) == [] and heap.pop_due(150) == ["k"]
