"""fsync=never (and always) across partitions: the writes of every log that are ready in one event-loop turn go to
the storage thread as one job, not one job per log.

Why: each ``__consumer_offsets`` partition is a log of its own, and a loop turn of a busy group coordinator appends
to several of them (one record batch per shard that wrote). A ``run_in_executor`` hop is the dearest part of a
small append: the work item, the queue, the thread's wake-up and GIL hand-off, the concurrent future and its
callback back into the loop, about as many instructions as the rest of the append (``bench.group_hotpath`` under
callgrind: writing in place of the hop took ~6 % of the instructions per classic group formed). A round costs one
hop however many logs it writes; fsync=batch has the same sharing, with the sync, in ``storage.group_commit``.

Nothing about durability changes: each log's writes are the same ``pwrite``/``pwritev`` calls in the same order
(a log's writer awaits its round before it drains more, so a log never has two rounds in flight), and a write that
fails fails that log's appends alone, as before. Rounds are not limited in number: with nothing to wait for
(no fsync) a round only adds the loop turn it waits to be gathered in.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Executor

from groupcoord.storage.group_commit import (RoundWriter, Runs, hand_over, resolve_round_future, submit_round,
                                             write_every_log)
from groupcoord.storage.prompt_future import run_due
from groupcoord.storage.kept_loop import KeptLoop

_Done = Callable[[BaseException | None], None]

__all__ = ["WriteRounds"]


class WriteRounds:
    """The write path of every log under one data directory whose fsync policy is not batch: ``write(runs)`` is
    awaited with a log's writes and returns once they are written (or raises that log's write error); ``join(log)``
    is the same without a coroutine (group_commit.RoundWriter: the writes are taken as the round starts)."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._waiting: list[tuple[Runs, _Done]] = []
        self._joined: list[RoundWriter] = []
        self._scheduled = False
        self._loop = KeptLoop()
        self.rounds = 0
        """Rounds started (tests read it)."""

    async def write(self, runs: Runs) -> None:
        loop = self._loop()
        done: asyncio.Future[None] = loop.create_future()
        self._waiting.append((runs, functools.partial(resolve_round_future, done)))
        self._schedule(loop)
        await done

    def join(self, log: RoundWriter) -> None:
        """``log`` has writes queued: the next round takes them and tells it the outcome (as GroupCommit.join)."""
        self._joined.append(log)
        self._schedule(self._loop())

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._scheduled:
            # Start at the end of this loop turn, so every log whose appends are ready now joins the round.
            self._scheduled = True
            loop.call_soon(self._start_round, loop)

    def _start_round(self, loop: asyncio.AbstractEventLoop) -> None:
        """``loop``: the one found running when the round was scheduled (asked once: storage/kept_loop.py)."""
        self._scheduled = False
        waiting, self._waiting = self._waiting, []
        if self._joined:
            joined, self._joined = self._joined, []
            for log in joined:
                taken = log.take_writes()
                if taken is not None:
                    waiting.append((taken[0], log.round_done))
        if not waiting:
            return
        self.rounds += 1
        try:
            submit_round(self.executor, loop, functools.partial(_finish, waiting), len(waiting), write_every_log,
                         [runs for runs, _ in waiting])
        except BaseException as exc:  # noqa: BLE001 - e.g. the executor shut down: the round's logs hear it
            _finish(waiting, [exc] * len(waiting))


def _finish(waiting: list[tuple[Runs, _Done]], outcomes: list[BaseException | None]) -> None:
    for (_, done), outcome in zip(waiting, outcomes):
        hand_over(done, outcome)
    run_due()  # the handlers waiting on the round's appends answer now (prompt_future.py)
