"""While the loop is busy, a fetch woken by data lingers ``fetch.busy.linger.ms`` before it reads, so that its answer
carries what arrived meanwhile; while the loop has time to spare it answers at once, as Kafka; the linger never goes
past the fetch's own max wait, and shutdown answers a lingering fetch at once."""
from __future__ import annotations

import asyncio

import pytest

from .conftest import Node
from .test_fetch import append, batch, partitions_of, request
from .test_fetch_round_wait import batches_in, parked_fetch, settle

LINGER_MS = 25


class Load:
    """The loop's load as the test sets it."""

    def __init__(self, busy: bool) -> None:
        self.is_busy = busy

    def busy(self) -> bool:
        return self.is_busy


@pytest.fixture
async def lingering(tmp_path):
    """A data plane with the linger on; its loop load is the test's (``dataplane.fetch._load``)."""
    node = Node(tmp_path / "data", fetch_busy_linger_ms=LINGER_MS)
    dataplane = await node.start()
    dataplane.fetch._load = Load(busy=True)
    await dataplane.topics.create("orders", 1)
    await append(dataplane, "orders", 0, batch(2))
    yield node
    await node.stop()


async def test_a_woken_fetch_on_a_busy_loop_lingers_and_answers_with_what_came_meanwhile(lingering):
    dataplane, clock = lingering.dataplane, lingering.clock
    pending = await parked_fetch(dataplane)
    await append(dataplane, "orders", 0, batch(3))
    await settle()
    assert not pending.done()
    await append(dataplane, "orders", 0, batch(4))     # new data does not cut the linger short
    await settle()
    assert not pending.done()
    clock.advance(LINGER_MS - 1)
    await settle()
    assert not pending.done()
    clock.advance(1)
    response = await asyncio.wait_for(pending, 5)
    assert batches_in(response) == 2
    assert partitions_of(response)[0]["high_watermark"] == 9
    assert dataplane.fetch.lingered == 1


async def test_a_woken_fetch_on_a_loop_with_time_to_spare_answers_at_once(lingering):
    dataplane = lingering.dataplane
    dataplane.fetch._load.is_busy = False
    pending = await parked_fetch(dataplane)
    await append(dataplane, "orders", 0, batch(3))
    response = await asyncio.wait_for(pending, 5)     # (the manual clock stands still: no timer answered it)
    assert batches_in(response) == 1
    assert dataplane.fetch.lingered == 0


async def test_a_fetch_with_data_at_hand_is_answered_at_once_however_busy_the_loop(lingering):
    dataplane = lingering.dataplane
    response = await asyncio.wait_for(dataplane.fetch.fetch(request((0, 0, 1 << 20), max_wait_ms=30_000)), 5)
    assert batches_in(response) == 1
    assert dataplane.fetch.lingered == 0


async def test_the_linger_ends_at_the_fetchs_own_max_wait(lingering):
    dataplane, clock = lingering.dataplane, lingering.clock
    pending = await parked_fetch(dataplane, max_wait_ms=40)
    clock.advance(30)
    await append(dataplane, "orders", 0, batch(3))
    await settle()
    assert not pending.done()
    assert dataplane.fetch.lingered == 1
    clock.advance(10)                                   # the max wait, 15 ms short of the linger
    response = await asyncio.wait_for(pending, 5)
    assert batches_in(response) == 1


async def test_shutdown_answers_a_lingering_fetch_at_once(lingering):
    dataplane = lingering.dataplane
    pending = await parked_fetch(dataplane)
    await append(dataplane, "orders", 0, batch(3))
    await settle()
    assert not pending.done()
    assert dataplane.fetch.lingered == 1               # held by the linger, not by the round wait
    dataplane.fetch._purgatory.wake_all()
    response = await asyncio.wait_for(pending, 5)
    assert batches_in(response) == 1


async def test_no_linger_when_it_is_set_to_zero(tmp_path):
    node = Node(tmp_path / "data", fetch_busy_linger_ms=0)
    dataplane = await node.start()
    try:
        dataplane.fetch._load = Load(busy=True)
        await dataplane.topics.create("orders", 1)
        await append(dataplane, "orders", 0, batch(2))
        pending = await parked_fetch(dataplane)
        await append(dataplane, "orders", 0, batch(3))
        response = await asyncio.wait_for(pending, 5)
        assert batches_in(response) == 1
        assert dataplane.fetch.lingered == 0
    finally:
        await node.stop()
