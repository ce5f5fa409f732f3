"""The deadline heap behind every purgatory: moves, cancels and fires in deadline order."""

from groupcoord.coordinator.groups.runtime.timers import CoordinatorTimer, KeyedOperation, TimerHeap


def test_timers_fire_in_deadline_order_and_only_when_due():
    timers = TimerHeap()
    timers.schedule("b", 200)
    timers.schedule("a", 100)
    assert timers.next_deadline() == 100
    assert timers.pop_due(99) == []
    assert timers.pop_due(200) == ["a", "b"]
    assert timers.next_deadline() is None


def test_a_heartbeat_moves_its_deadline_instead_of_adding_one():
    timers = TimerHeap()
    timers.schedule("member", 100)
    timers.schedule("member", 500)
    assert timers.pop_due(400) == []
    assert timers.pop_due(500) == ["member"]


def test_cancelled_timers_never_fire_and_many_moves_stay_compact():
    timers = TimerHeap()
    timers.schedule("gone", 10)
    timers.cancel("gone")
    for i in range(10_000):
        timers.schedule("busy", 1000 + i)
    assert len(timers._heap) < 1000
    assert timers.pop_due(5000) == []
    assert timers.pop_due(20_000) == ["busy"]


def test_a_keyed_operation_runs_with_its_own_key_and_is_shared_not_copied():
    fired = []
    expire = KeyedOperation(lambda key, state, now: fired.append((key, state, now)) or key)
    timer = CoordinatorTimer()
    timer.schedule(("heartbeat", "g", "m1"), 100, expire)
    timer.schedule(("heartbeat", "g", "m2"), 50, expire)
    timer.schedule(("plain",), 75, lambda state, now: "plain ran")
    timer.cancel(("heartbeat", "g", "m1"))
    timer.schedule(("heartbeat", "g", "m1"), 120, expire)
    assert timer._operations[("heartbeat", "g", "m1")] is timer._operations[("heartbeat", "g", "m2")] is expire
    assert [op("state", 200) for op in timer.pop_due(200)] == [("heartbeat", "g", "m2"), "plain ran",
                                                                ("heartbeat", "g", "m1")]
    assert fired == [(("heartbeat", "g", "m2"), "state", 200), (("heartbeat", "g", "m1"), "state", 200)]
    assert len(timer) == 0
