"""A long-polling fetch parks until data arrives or max_wait_ms passes, on an injected clock."""
import asyncio

from groupcoord.coordinator.clock import ManualClock
from groupcoord.coordinator.dataplane.fetch_purgatory import FetchPurgatory, WakeReason

TP = ("orders", 0)


async def test_an_append_wakes_the_parked_fetch():
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    woken = purgatory.park([TP, ("orders", 1)], clock.monotonic_ms() + 500)
    assert not woken.done()
    purgatory.notify(("orders", 1))
    assert await woken is WakeReason.DATA
    assert purgatory.parked == 0
    assert clock.pending_timers == 0


async def test_the_deadline_wakes_the_parked_fetch_and_not_before():
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    woken = purgatory.park([TP], clock.monotonic_ms() + 500)
    clock.advance(499)
    assert not woken.done()
    clock.advance(1)
    assert await woken is WakeReason.DEADLINE
    assert purgatory.parked == 0


async def test_appends_to_other_partitions_do_not_wake_it():
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    woken = purgatory.park([TP], clock.monotonic_ms() + 500)
    purgatory.notify(("orders", 7))
    purgatory.notify(("payments", 0))
    assert not woken.done()
    clock.advance(500)
    assert woken.result() is WakeReason.DEADLINE


async def test_a_deadline_already_past_resolves_at_once():
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    woken = purgatory.park([TP], clock.monotonic_ms())
    assert woken.result() is WakeReason.DEADLINE
    assert purgatory.parked == 0


async def test_shutdown_releases_every_parked_fetch():
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    waits = [purgatory.park([("t", i)], clock.monotonic_ms() + 30_000) for i in range(3)]
    purgatory.wake_all()
    assert [w.result() for w in waits] == [WakeReason.SHUTDOWN] * 3
    assert clock.pending_timers == 0


async def test_a_cancelled_fetch_leaves_nothing_behind():
    """A connection closing cancels its handler; its waiter and timer must go with it."""
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    woken = purgatory.park([TP], clock.monotonic_ms() + 500)
    woken.cancel()
    await asyncio.sleep(0)
    assert purgatory.parked == 0
    assert clock.pending_timers == 0
    purgatory.notify(TP)


async def test_a_hold_is_not_cut_short_by_data_only_by_its_time_or_shutdown():
    """A fetch lingering under load holds on its partitions: appends do not wake it, its time does; shutdown (or
    the topic's deletion) does at once."""
    clock = ManualClock()
    purgatory = FetchPurgatory(clock)
    held = purgatory.hold([TP], clock.monotonic_ms() + 25)
    parked = purgatory.park([TP], clock.monotonic_ms() + 500)
    purgatory.notify(TP)
    assert parked.result() is WakeReason.DATA
    assert not held.done()
    clock.advance(25)
    assert await held is WakeReason.DEADLINE
    assert purgatory.parked == 0
    released = purgatory.hold([TP], clock.monotonic_ms() + 25)
    purgatory.wake_all(TP)
    assert released.result() is WakeReason.SHUTDOWN
    assert clock.pending_timers == 0
