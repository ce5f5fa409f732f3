"""storage.kept_loop.KeptLoop: the running loop, asked once; a closed loop is asked again (the next
asyncio.run of the same object)."""

from __future__ import annotations

import asyncio

import pytest

from groupcoord.storage.kept_loop import KeptLoop


def test_the_loop_is_asked_once(monkeypatch):
    kept = KeptLoop()

    async def main() -> None:
        running = asyncio.get_running_loop()
        assert kept() is running
        asked = []
        monkeypatch.setattr(asyncio, "get_running_loop", lambda: asked.append(1) or running)
        assert kept() is running and kept() is running
        assert not asked

    asyncio.run(main())


def test_a_closed_loop_is_replaced_by_the_running_one():
    kept = KeptLoop()
    first = asyncio.run(_running(kept))
    assert first.is_closed()
    second = asyncio.run(_running(kept))
    assert second is not first


def test_outside_a_loop_it_raises_as_get_running_loop_does():
    with pytest.raises(RuntimeError):
        KeptLoop()()


async def _running(kept: KeptLoop) -> asyncio.AbstractEventLoop:
    loop = kept()
    assert loop is asyncio.get_running_loop()
    return loop
