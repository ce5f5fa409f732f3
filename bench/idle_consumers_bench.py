"""Idle consumers must cost (almost) nothing: 100 consumers long-polling an empty topic, each Fetch parked for
max_wait_ms=500 in the fetch purgatory. A purgatory that busy-loops (re-checks parked fetches on a timer, or
spins on readiness) shows up here as server CPU; one that sleeps until a deadline or an append shows ~2x100
answered fetches/s at a few per cent of one core.

The broker runs as a child process (fsync=never: nothing is written anyway). Its CPU time is read from
/proc/<pid>/stat (utime + stime) at the start and end of the measured window, after a warm-up in which every
consumer has parked its first fetch. Bounded: warm-up plus --seconds, then everything stops.

    python -m bench.idle_consumers_bench [--consumers 100] [--seconds 10] [--max-wait-ms 500]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import time
import uuid

from .aioclient import AioConnection
from .requests import call
from .server_cpu import cpu_seconds
from .servers import groupcoord

WARM_UP_S = 2.0
FETCH = 1


def create_topic(bootstrap: str, topic: str) -> None:
    host, _, port = bootstrap.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        answer = call(sock, 19, 7, {"topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1,
                                                "assignments": [], "configs": []}],
                                    "timeout": 10000, "validate_only": False})
    assert int(answer.topics[0].error_code) == 0, answer


def fetch_body(topic: str, max_wait_ms: int) -> dict:
    return {"replica_id": -1, "max_wait": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                        "last_fetched_epoch": -1, "log_start_offset": -1,
                                                        "partition_max_bytes": 1 << 20}]}]}


async def long_poll(bootstrap: str, body: dict, stop_at: float, answered: list[float]) -> None:
    """One idle consumer: a Fetch, wait for the answer, fetch again, until stop_at. Records each answer's time."""
    connection = await AioConnection.open(bootstrap)
    try:
        while time.monotonic() < stop_at:
            response = await connection.send(FETCH, 12, body)
            partition = response.responses[0].partitions[0]
            assert int(partition.error_code) == 0 and not partition.records, "the topic was meant to stay empty"
            answered.append(time.monotonic())
    finally:
        await connection.close()


async def measure(bootstrap: str, pid: int, consumers: int, seconds: float, max_wait_ms: int) -> None:
    topic = f"idle-{uuid.uuid4().hex[:8]}"
    await asyncio.to_thread(create_topic, bootstrap, topic)
    body = fetch_body(topic, max_wait_ms)
    answered: list[float] = []
    start = time.monotonic()
    window_start, window_end = start + WARM_UP_S, start + WARM_UP_S + seconds
    # every consumer stops after its first answer past the window, so the server is idle-parked throughout it
    pollers = [asyncio.create_task(long_poll(bootstrap, body, window_end, answered)) for _ in range(consumers)]
    await asyncio.sleep(max(0.0, window_start - time.monotonic()))
    cpu_before, wall_before = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(max(0.0, window_end - time.monotonic()))
    cpu_after, wall_after = cpu_seconds(pid), time.monotonic()
    await asyncio.wait_for(asyncio.gather(*pollers), timeout=max_wait_ms / 1000 * 4 + 10)

    wall = wall_after - wall_before
    in_window = sum(1 for t in answered if wall_before <= t <= wall_after)
    cpu = cpu_after - cpu_before
    print(f"idle consumers : {consumers} long-polling an empty topic, max_wait_ms={max_wait_ms}, window {wall:.1f} s")
    print(f"server CPU     : {cpu:.2f} s over {wall:.1f} s = {100 * cpu / wall:.1f} % of one core")
    print(f"fetches        : {in_window / wall:,.0f} answered/s (ideal {consumers * 1000 / max_wait_ms:,.0f}/s: "
          f"each parked for its full max_wait), {1000 * cpu / max(in_window, 1):.3f} ms server CPU per fetch")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--consumers", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--max-wait-ms", type=int, default=500)
    args = parser.parse_args()
    with groupcoord(None, fsync="never") as started:
        bootstrap, pid = started[0], started.pid
        asyncio.run(measure(bootstrap, pid, args.consumers, args.seconds, args.max_wait_ms))


if __name__ == "__main__":
    main()
