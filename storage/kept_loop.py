"""The running event loop, asked for once per object instead of once per operation.

Why: on CPython 3.11 every ``asyncio.get_running_loop()`` (and every loop look-up asyncio makes for itself, as
``asyncio.Event.wait`` and ``asyncio.ensure_future`` do) makes a ``getpid()`` system call, the check that the
process did not fork since the loop was set: ~0.5 µs of kernel time each on this VM. The commit path asked a few
times per append (the log's append and the fsync=batch round it joins, the shard writer's wake-ups): with an
append per read of eight commits, 0.5 ``getpid`` per commit in the daemon under load (``perf stat`` of its
system calls). An object that runs on one loop at a time keeps that loop instead; a closed loop is asked again
(a test's next ``asyncio.run`` using the same object).
"""

from __future__ import annotations

import asyncio

__all__ = ["KeptLoop"]


class KeptLoop:
    """``kept()``: the running loop, looked up the first time and again only once that loop is closed."""

    __slots__ = ("_loop",)

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.get_running_loop()
        return loop
