"""Classic groups of 3 formed in one process, without sockets: CPU per group of the broker's Python and the
request bytes it is fed, the figure a change to the JoinGroup/SyncGroup path moves.

    python -m bench.group_hotpath                     # 400 groups per trial, 9 trials: min and median ms
    WARM=200 TRIALS=1 valgrind --tool=callgrind python -m bench.group_hotpath 300   # instructions (see below)

A broker is started in-process (fsync=never, ``group.initial.rebalance.delay.ms=0`` as bench.group_cpu's
daemon); 50 workers of three connections on transports that only count what is written (bench.hotpath_bench)
each form groups one after another as bench.group_bench's ``many_groups`` does: three JoinGroup v9 without a
member id (MEMBER_ID_REQUIRED), three with it, the leader's and the followers' SyncGroup v5, one Heartbeat v4
each. The requests are pre-encoded byte strings and the answers are read at fixed offsets, so the client's
share is small and the same for any tree. Socket and loop I/O are left out (bench.group_cpu has them).

On a shared machine the CPU time still wanders; instructions wander less: run it under callgrind with
``TRIALS=0`` and with ``TRIALS=1`` (one trial of N groups) and divide the difference by N. Not fully: the
shards' timers and appends still interleave differently under load (two runs of one tree differed by up to
20 % on a machine at load 8), so compare several runs of each side.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import struct
import sys
import time

from groupcoord.coordinator.broker import Broker, new_event_loop
from groupcoord.coordinator.ops.cli import settle_heap

from .group_bench import ASSIGNMENT, heartbeat_v4, join_v9, sync_v5
from .hotpath_bench import connect

_correlation = itertools.count(1)
_CLIENT_ID = b"\x00\x05bench"


def request(api_key: int, version: int, body: bytes) -> bytes:
    """A flexible request frame (header v2, client id "bench", no tagged fields), size-prefixed."""
    head = struct.pack(">hhi", api_key, version, next(_correlation)) + _CLIENT_ID + b"\x00"
    return struct.pack(">i", len(head) + len(body)) + head + body


async def exchange(conns: list, frames: list[bytes]) -> list[bytes]:
    """One request to each member's connection, then each one's answer."""
    for (conn, transport), frame in zip(conns, frames):
        transport.before = transport.frames
        conn.data_received(frame)
    for _, transport in conns:
        await transport.written(transport.before + 1)
    return [transport.last for _, transport in conns]


async def form(conns: list, group: str) -> None:
    answers = await exchange(conns, [request(11, 9, join_v9(group, ""))] * 3)
    members = [a[24:24 + a[23] - 1].decode() for a in answers]  # MEMBER_ID_REQUIRED's member id
    answers = await exchange(conns, [request(11, 9, join_v9(group, m)) for m in members])
    leader = answers[0][35:35 + answers[0][34] - 1].decode()  # generation 1, protocol "consumer"/"range"
    await exchange(conns, [request(14, 5, sync_v5(group, 1, m, "range",
                                                  [(x, ASSIGNMENT) for x in members] if m == leader else []))
                           for m in members])
    await exchange(conns, [request(12, 4, heartbeat_v4(group, 1, m)) for m in members])


async def trial(broker: Broker, tag: str, groups: int, workers: int = 50) -> float:
    """ms of this process's CPU per group formed."""
    queue = list(range(groups))

    async def worker() -> None:
        conns = [connect(broker) for _ in range(3)]
        while queue:
            await form(conns, f"{tag}-{queue.pop()}")

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return (time.process_time() - started) / groups * 1000


async def run(groups: int, trials: int, warm: int) -> None:
    async with Broker(fsync="never", metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        settle_heap()  # as the daemon does once it serves
        await trial(broker, "warm", warm)
        if not trials:
            return
        cpus = sorted([await trial(broker, f"t{i}", groups) for i in range(trials)])
        print(f"{groups} groups of 3 per trial: {cpus[0]:.4f} ms CPU per group min, median {cpus[len(cpus) // 2]:.4f} "
              f"({' '.join(f'{c:.3f}' for c in cpus)})")


def main() -> None:
    from groupcoord.coordinator.ops.logging import configure_logging

    configure_logging("warning", "json")
    groups = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    loop = new_event_loop()
    loop.run_until_complete(run(groups, int(os.environ.get("TRIALS", 9)), int(os.environ.get("WARM", 500))))


if __name__ == "__main__":
    main()
