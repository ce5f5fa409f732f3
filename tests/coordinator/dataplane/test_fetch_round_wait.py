"""A fetch woken by data while more appends to its partitions are on their way to durability (a write round has
them) waits for them too, so one answer carries both (fetch.ROUND_WAIT_MS); with none on their way it answers at
once; a round that never makes them readable holds it no longer than the bound; shutdown answers it at once.

The storage thread's write job is held at a gate so that a round stays in flight while the test appends behind it
(a log never has two rounds in flight: the second append waits for the next round)."""
from __future__ import annotations

import asyncio
import threading

from groupcoord.coordinator.dataplane import fetch as fetch_module
from groupcoord.protocol.record_batch import iter_batches
from groupcoord.storage import write_rounds

from .test_fetch import append, batch, partitions_of, request

MAX_WAIT_MS = 30_000


class HeldRounds:
    """The write rounds' job, each held until the test lets it through (``release``)."""

    def __init__(self) -> None:
        self.entered = threading.Semaphore(0)
        self.gates: list[threading.Event] = []
        self.real = write_rounds.write_every_log

    def job(self, all_runs):
        gate = threading.Event()
        self.gates.append(gate)
        self.entered.release()
        gate.wait(10)
        return self.real(all_runs)

    async def wait_entered(self) -> None:
        for _ in range(5000):
            if self.entered.acquire(blocking=False):
                return
            await asyncio.sleep(0.001)
        raise AssertionError("no write round started")

    def release(self, index: int) -> None:
        self.gates[index].set()


async def parked_fetch(dataplane, min_bytes: int = 1, max_wait_ms: int = MAX_WAIT_MS) -> asyncio.Future:
    """A fetch of partition 0 from its end (offset 2), parked."""
    pending = asyncio.ensure_future(dataplane.fetch.fetch(
        request((0, 2, 1 << 20), max_wait_ms=max_wait_ms, min_bytes=min_bytes)))
    for _ in range(100):
        await asyncio.sleep(0)
        if dataplane.fetch._purgatory.parked:
            return pending
    raise AssertionError("the fetch did not park")


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def woken_with_an_append_on_its_way(dataplane, monkeypatch, min_bytes: int = 1):
    """Topic "orders" of one partition with 2 records; a fetch parked at its end; an append of 3 records made
    readable by its round (which wakes the fetch) while an append of 4 has its offsets and waits in the next round,
    held. Returns the rounds (``release(1)`` lets the second through), the fetch and the second append."""
    await dataplane.topics.create("orders", 1)
    await append(dataplane, "orders", 0, batch(2))
    held = HeldRounds()
    monkeypatch.setattr(write_rounds, "write_every_log", held.job)
    pending = await parked_fetch(dataplane, min_bytes)
    first = asyncio.ensure_future(append(dataplane, "orders", 0, batch(3)))
    await held.wait_entered()
    second = asyncio.ensure_future(append(dataplane, "orders", 0, batch(4)))  # offsets taken, its round not begun
    await settle()
    log = dataplane.topics.log("orders", 0)
    assert (log.high_watermark, log.log_end_offset) == (2, 9)
    held.release(0)   # the first round ends: the fetch is woken with the second append still on its way
    await first
    await held.wait_entered()
    await settle()
    return held, pending, second


def batches_in(response) -> int:
    return len(list(iter_batches(bytes(partitions_of(response)[0]["records"]))))


async def test_a_fetch_woken_while_another_append_is_on_its_way_answers_with_both(dataplane, monkeypatch):
    held, pending, second = await woken_with_an_append_on_its_way(dataplane, monkeypatch)
    assert not pending.done()
    held.release(1)
    await second
    response = await asyncio.wait_for(pending, 5)
    assert batches_in(response) == 2
    assert partitions_of(response)[0]["high_watermark"] == 9


async def test_a_fetch_woken_with_nothing_else_on_its_way_answers_at_once(dataplane):
    await dataplane.topics.create("orders", 1)
    await append(dataplane, "orders", 0, batch(2))
    pending = await parked_fetch(dataplane)
    await append(dataplane, "orders", 0, batch(3))
    response = await asyncio.wait_for(pending, 5)  # (the manual clock stands still: no timer answered it)
    assert batches_in(response) == 1


async def test_appends_a_round_never_makes_readable_hold_the_woken_fetch_only_for_the_bound(node, monkeypatch):
    held, pending, second = await woken_with_an_append_on_its_way(node.dataplane, monkeypatch)
    assert not pending.done()
    node.clock.advance(fetch_module.ROUND_WAIT_MS)  # (far short of the fetch's max wait)
    response = await asyncio.wait_for(pending, 5)
    assert batches_in(response) == 1
    held.release(1)
    await second


async def test_a_fetch_waiting_for_a_round_is_answered_at_once_by_shutdown(dataplane, monkeypatch):
    """Even one asking more than it has (min_bytes): it does not park again on a purgatory being emptied."""
    held, pending, second = await woken_with_an_append_on_its_way(dataplane, monkeypatch, min_bytes=1 << 20)
    assert not pending.done()
    dataplane.fetch._purgatory.wake_all()
    response = await asyncio.wait_for(pending, 5)
    assert batches_in(response) == 1
    held.release(1)
    await second
