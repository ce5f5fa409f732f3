"""coordinator.groups.runtime.wakeup.Wakeup: asyncio.Event's set / clear / wait for the shard writer, its one
waiter, on the loop the runtime keeps."""

from __future__ import annotations

import asyncio

import pytest

from groupcoord.coordinator.groups.runtime.wakeup import Wakeup


def test_a_set_wakeup_is_not_waited_for():
    async def main() -> None:
        wakeup = Wakeup()
        wakeup.set()
        assert wakeup.is_set()
        await asyncio.wait_for(wakeup.wait(asyncio.get_running_loop()), 1.0)
        assert wakeup.is_set()  # waiting does not clear it, as with asyncio.Event

    asyncio.run(main())


def test_set_wakes_the_waiter_and_clear_makes_it_wait_again():
    async def main() -> None:
        loop = asyncio.get_running_loop()
        wakeup = Wakeup()
        waiter = loop.create_task(wakeup.wait(loop))
        await asyncio.sleep(0)
        assert not waiter.done()
        wakeup.set()
        await asyncio.wait_for(waiter, 1.0)
        wakeup.clear()
        assert not wakeup.is_set()
        again = loop.create_task(wakeup.wait(loop))
        await asyncio.sleep(0.01)
        assert not again.done()
        wakeup.set()
        wakeup.set()  # a second set before the waiter ran changes nothing
        await asyncio.wait_for(again, 1.0)

    asyncio.run(main())


def test_a_cancelled_wait_leaves_it_usable():
    async def main() -> None:
        loop = asyncio.get_running_loop()
        wakeup = Wakeup()
        waiter = loop.create_task(wakeup.wait(loop))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        wakeup.set()  # nobody waits: no error
        await asyncio.wait_for(wakeup.wait(loop), 1.0)

    asyncio.run(main())


def test_one_waiter_at_a_time():
    async def main() -> None:
        loop = asyncio.get_running_loop()
        wakeup = Wakeup()
        first = loop.create_task(wakeup.wait(loop))
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError):
            await wakeup.wait(loop)
        wakeup.set()
        await first

    asyncio.run(main())
