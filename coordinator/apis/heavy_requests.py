"""What every ``HEAVY`` handler (a very large request read a slice at a time) shares.

``turn()``: heavy requests take turns, one slice each, so that with several of them at once (four
million-partition commits) the event loop still runs only one slice between two rounds of everything
else: a heartbeat waits for one slice, not for one slice of each heavy request.

A heavy request leaves behind free memory in the allocator's arenas: the C library keeps freed heap
pages mapped, so after a million-partition OffsetCommit the process stayed hundreds of MB above its
baseline although nothing referenced them any more. Once such a request is answered, ``trim_later``
asks glibc to hand its free pages back (``malloc_trim``), off the event loop, at most once per
``TRIM_INTERVAL_S``. On a C library without it, nothing is done. The C library is looked up by the first
trim, in the executor: ``ctypes.util.find_library`` runs ``ldconfig -p`` in a subprocess, which cost every
start-up ~5-10 ms when it was done at import (this module is imported by the eager JoinGroup and OffsetCommit
handlers).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from contextlib import asynccontextmanager
from typing import AsyncIterator

import structlog

TRIM_INTERVAL_S = 1.0

log = structlog.get_logger("groupcoord.heavy_requests")


def _load_malloc_trim():  # type: ignore[no-untyped-def]
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_UNRESOLVED = object()
_malloc_trim = _UNRESOLVED  # glibc's malloc_trim, None without it: resolved by the first trim (``_trim_now``)
_last_trim = [0.0]
_scheduled = [False]


_turns: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]" = weakref.WeakKeyDictionary()


@asynccontextmanager
async def turn() -> AsyncIterator[None]:
    """One slice of heavy work: waits for the other heavy requests' current slice, and hands the loop
    back to everything else afterwards."""
    loop = asyncio.get_running_loop()
    lock = _turns.get(loop)
    if lock is None:
        lock = _turns[loop] = asyncio.Lock()
    async with lock:
        yield
    await asyncio.sleep(0)


def trim_later(delay_s: float = 0.2) -> None:
    """After the answer has gone (``delay_s``), give the allocator's free pages back to the system."""
    if _malloc_trim is None or _scheduled[0]:
        return
    loop = asyncio.get_running_loop()
    _scheduled[0] = True
    wait = max(delay_s, _last_trim[0] + TRIM_INTERVAL_S - time.monotonic())
    loop.call_later(wait, _trim, loop)


def _trim(loop: asyncio.AbstractEventLoop) -> None:
    _scheduled[0] = False
    _last_trim[0] = time.monotonic()
    future = loop.run_in_executor(None, _trim_now)
    future.add_done_callback(_report)


def _trim_now() -> int:
    """In the executor: malloc_trim(0), once the C library has been looked up (the first time, here)."""
    global _malloc_trim
    if _malloc_trim is _UNRESOLVED:
        _malloc_trim = _load_malloc_trim()
    return 0 if _malloc_trim is None else _malloc_trim(0)


def _report(future: "asyncio.Future[int]") -> None:
    if future.cancelled() or future.exception() is not None:
        log.debug("malloc_trim failed", error=repr(future.exception()) if not future.cancelled() else "cancelled")
