"""Where long-polling Fetch requests wait (Kafka's DelayedFetch purgatory).

A fetch that has fewer than ``min_bytes`` to return parks here on the partitions it reads, and is woken
either by an append to one of them (the logs' append listeners call ``notify``) or by its deadline, so an
idle consumer costs one timer and no polling. The purgatory only decides *when* to look again; the fetch
itself re-reads the logs and decides whether it is satisfied. ``hold`` is the same wait that new data does not cut
short: a fetch lingering while the loop is busy (``FetchService._linger``) waits there.
"""
from __future__ import annotations

import asyncio
import enum
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from groupcoord.coordinator.clock import Clock, TimerHandle

TopicPartition = tuple[str, int]


class WakeReason(enum.Enum):
    DATA = "data"            # one of the watched partitions was appended to
    DEADLINE = "deadline"    # max_wait_ms passed
    SHUTDOWN = "shutdown"    # the broker is stopping, or the topic was deleted


@dataclass(eq=False)
class _Waiter:
    """A parked Fetch: the partitions whose new data wakes it (or, ``data_wakes`` False, that it holds on: only
    their deletion or shutdown wake it before its timer), its future, and its max-wait timer."""
    keys: tuple[TopicPartition, ...]
    future: asyncio.Future[WakeReason]
    timer: TimerHandle | None = field(default=None)
    data_wakes: bool = True


class FetchPurgatory:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._watchers: dict[TopicPartition, set[_Waiter]] = defaultdict(set)

    def park(self, keys: Iterable[TopicPartition], deadline_ms: int) -> asyncio.Future[WakeReason]:
        """A future resolved with the first of: data on a key, the deadline, shutdown."""
        return self._wait(keys, deadline_ms, True)

    def hold(self, keys: Iterable[TopicPartition], until_ms: int) -> asyncio.Future[WakeReason]:
        """``park`` that new data does not cut short: resolved at ``until_ms`` (DEADLINE), or by shutdown or the
        deletion of a key's topic (SHUTDOWN). A fetch lingering under load waits here (``FetchService``)."""
        return self._wait(keys, until_ms, False)

    def _wait(self, keys: Iterable[TopicPartition], deadline_ms: int, data_wakes: bool) -> asyncio.Future[WakeReason]:
        future: asyncio.Future[WakeReason] = asyncio.get_running_loop().create_future()
        waiter = _Waiter(tuple(keys), future, data_wakes=data_wakes)
        delay = deadline_ms - self._clock.monotonic_ms()
        if delay <= 0:
            future.set_result(WakeReason.DEADLINE)
            return future
        for key in waiter.keys:
            self._watchers[key].add(waiter)
        waiter.timer = self._clock.call_later(delay, lambda: self._complete(waiter, WakeReason.DEADLINE))
        future.add_done_callback(lambda _f: self._forget(waiter))
        return future

    def notify(self, key: TopicPartition) -> None:
        """Called after an append to ``key`` became visible (durable)."""
        for waiter in list(self._watchers.get(key, ())):
            if waiter.data_wakes:
                self._complete(waiter, WakeReason.DATA)

    def wake_all(self, key: TopicPartition | None = None) -> None:
        """Release waiters (all, or those on ``key``) so that they answer now: shutdown or topic deletion."""
        keys = [key] if key is not None else list(self._watchers)
        for k in keys:
            for waiter in list(self._watchers.get(k, ())):
                self._complete(waiter, WakeReason.SHUTDOWN)

    @property
    def parked(self) -> int:
        return len({w for ws in self._watchers.values() for w in ws})

    def _complete(self, waiter: _Waiter, reason: WakeReason) -> None:
        if not waiter.future.done():
            waiter.future.set_result(reason)
        self._forget(waiter)

    def _forget(self, waiter: _Waiter) -> None:
        if waiter.timer is not None:
            waiter.timer.cancel()
            waiter.timer = None
        for key in waiter.keys:
            watchers = self._watchers.get(key)
            if watchers is not None:
                watchers.discard(waiter)
                if not watchers:
                    del self._watchers[key]
