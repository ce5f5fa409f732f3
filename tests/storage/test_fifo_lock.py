"""FifoLock: a free lock is taken without a coroutine; waiters are served in the order they came."""

import asyncio

import pytest

from groupcoord.storage.fifo_lock import FifoLock


async def test_a_free_lock_is_taken_at_once_and_a_held_one_refused():
    lock = FifoLock()
    assert lock.free() and lock.try_acquire()
    assert lock.locked() and not lock.free() and not lock.try_acquire()
    lock.release()
    assert lock.free()
    with pytest.raises(RuntimeError):
        lock.release()


async def test_waiters_are_served_in_order_and_no_newcomer_slips_in():
    lock = FifoLock()
    order = []
    assert lock.try_acquire()

    async def worker(name):
        async with lock:
            order.append(name)
            await asyncio.sleep(0)

    tasks = [asyncio.create_task(worker(n)) for n in "abc"]
    await asyncio.sleep(0)
    lock.release()
    assert lock.locked(), "handed straight to the first waiter"
    assert not lock.try_acquire(), "a newcomer does not overtake the waiters"
    await asyncio.gather(*tasks)
    assert order == ["a", "b", "c"]
    assert lock.free()


async def test_a_waiter_cancelled_before_or_after_it_was_handed_the_lock_passes_it_on():
    lock = FifoLock()
    assert lock.try_acquire()
    cancelled_waiting = asyncio.create_task(lock.acquire())
    handed_then_cancelled = asyncio.create_task(lock.acquire())
    last = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    cancelled_waiting.cancel()
    await asyncio.sleep(0)
    lock.release()              # handed to the second waiter...
    handed_then_cancelled.cancel()  # ...which is cancelled before it runs
    assert await last is True
    assert cancelled_waiting.cancelled() and handed_then_cancelled.cancelled()
    assert lock.locked()
    lock.release()
    assert lock.free()
