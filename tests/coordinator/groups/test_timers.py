"""The deadline heap behind every purgatory: moves, cancels and fires in deadline order."""

from groupcoord.coordinator.groups.runtime.timers import TimerHeap


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
