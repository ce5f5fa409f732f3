"""Group-coordinator figures, over real sockets against any bootstrap address:

- time for a group of N members (default 1,000) to reach Stable after the last JoinGroup is sent
  (every member joined, the leader's SyncGroup stored, every follower's SyncGroup answered);
- time for G groups of 3 members (default 10,000) to all reach Stable;
- Heartbeat and OffsetCommit requests/s with 64 connections (via bench.loadgen), as ratios of the bare
  uvloop ceiling measured in the same run.

    python -m bench.group_bench                       # starts its own groupcoord (fsync=never)
    python -m bench.group_bench --bootstrap HOST:PORT # or measures any broker
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import time
from typing import Any

from .aioclient import AioConnection
from .loadgen import run_load
from .servers import bare, groupcoord
from .wire_bench import _cores

SUBSCRIPTION = b"\x00\x01\x00\x00\x00\x01\x00\x05topic\xff\xff\xff\xff\x00\x00\x00\x00"


def _compact(text: str) -> bytes:
    """A compact string (its length + 1 as an unsigned varint, then UTF-8)."""
    raw = text.encode("utf-8")
    return _uvarint(len(raw) + 1) + raw


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_I32 = struct.Struct(">i")
_JOIN_TAIL = (_compact("consumer") + b"\x02" + _compact("range") + _uvarint(len(SUBSCRIPTION) + 1) + SUBSCRIPTION
              + b"\x00" + b"\x00" + b"\x00")  # protocol type, one protocol (no tags), null reason, no tags
_JOIN_TIMEOUTS = struct.pack(">ii", 60000, 120000)


def join_v9(group: str, member_id: str) -> bytes:
    """JoinGroup v9's body as `join_body` describes it, written directly (what kio writes, checked by
    tests/bench/test_group_bench_frames.py): member-id rounds and joins are most of the bench's requests."""
    return b"".join((_compact(group), _JOIN_TIMEOUTS, _compact(member_id), b"\x00", _JOIN_TAIL))


def sync_v5(group: str, generation: int, member_id: str, protocol_name: str | None,
            assignments: list[tuple[str, bytes]]) -> bytes:
    """SyncGroup v5's body (protocol type "consumer", no group instance id)."""
    parts = [_compact(group), _I32.pack(generation), _compact(member_id), b"\x00", _compact("consumer"),
             b"\x00" if protocol_name is None else _compact(protocol_name), _uvarint(len(assignments) + 1)]
    for member, assignment in assignments:
        parts += (_compact(member), _uvarint(len(assignment) + 1), assignment, b"\x00")
    parts.append(b"\x00")
    return b"".join(parts)


def heartbeat_v4(group: str, generation: int, member_id: str) -> bytes:
    """Heartbeat v4's body (no group instance id)."""
    return b"".join((_compact(group), _I32.pack(generation), _compact(member_id), b"\x00\x00"))


def join_body(group: str, member_id: str) -> dict[str, Any]:
    return {"group_id": group, "session_timeout": 60000, "rebalance_timeout": 120000, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": SUBSCRIPTION}], "reason": None}


async def _member_ids(conns: list[AioConnection], group: str, members: int) -> list[str]:
    """KIP-394: the first JoinGroup (v4+) without a member id is answered MEMBER_ID_REQUIRED with one. All
    of them sent at once, their answers awaited together (futures: no task each)."""
    answers = await asyncio.gather(*(conns[i % len(conns)].send_body(11, 9, join_v9(group, ""))
                                     for i in range(members)))
    for answer in answers:
        if answer.error_code != 79:
            raise RuntimeError(f"expected MEMBER_ID_REQUIRED, got {answer.error_code!r}")
    return [answer.member_id for answer in answers]


class _Changed:
    """What form_group waits on: set by a member whose stable generation changed. An asyncio.Event waited
    with wait_for cost a task and a timer per wait; this is one future per wait, and the caller's one
    timer for the whole formation resolves it too (``expire``)."""

    __slots__ = ("waiter", "expired")

    def __init__(self) -> None:
        self.waiter: asyncio.Future[None] | None = None
        self.expired = False

    def set(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def expire(self) -> None:
        self.expired = True
        self.set()

    def wait(self) -> asyncio.Future[None]:
        self.waiter = asyncio.get_running_loop().create_future()
        return self.waiter


class _Member:
    """One consumer's coordinator loop: join, sync, heartbeat; rejoin whenever the coordinator says so."""

    def __init__(self, conn: AioConnection, group: str, member_id: str, changed: _Changed) -> None:
        self.conn, self.group, self.member_id, self.changed = conn, group, member_id, changed
        self.generation = -1
        self.stable_generation = -1
        self.joins = 0
        self.last_error = 0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            joined = await self.conn.send_body(11, 9, join_v9(self.group, self.member_id))
            self.joins += 1
            self.last_error = int(joined.error_code)
            if joined.error_code in (25, 79):  # UNKNOWN_MEMBER_ID: start over; MEMBER_ID_REQUIRED: take the id
                self.member_id = joined.member_id if joined.error_code == 79 else ""
                continue
            if joined.error_code != 0:
                await asyncio.sleep(0.01)
                continue
            self.generation = joined.generation_id
            assignments = []
            if joined.leader == self.member_id:
                assignments = [(m.member_id, ASSIGNMENT) for m in joined.members]
            synced = await self.conn.send_body(14, 5, sync_v5(self.group, joined.generation_id, self.member_id,
                                                              joined.protocol_name, assignments))
            self.last_error = int(synced.error_code)
            if synced.error_code != 0:
                continue
            self.stable_generation = joined.generation_id
            self.changed.set()
            while not stop.is_set():
                beat = await self.conn.send_body(12, 4, heartbeat_v4(self.group, self.generation, self.member_id))
                if beat.error_code != 0:
                    self.last_error = int(beat.error_code)
                    self.stable_generation = -1
                    self.changed.set()
                    break
                await asyncio.sleep(HEARTBEAT_INTERVAL_S)


HEARTBEAT_INTERVAL_S = 1.0  # kafka clients default to 3 s; short enough here to notice a rebalance quickly

ASSIGNMENT = b"\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff"


async def form_group(conns: list[AioConnection], group: str, members: int, timeout: float = 120.0) -> tuple[float, int]:
    """Seconds from the last member's JoinGroup to every member synced in one generation (the group is
    Stable), and how many generations that took."""
    ids = await _member_ids(conns, group, members)
    changed = _Changed()
    crew = [_Member(conns[i % len(conns)], group, mid, changed) for i, mid in enumerate(ids)]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    tasks = [loop.create_task(m.run(stop)) for m in crew]
    deadline = loop.call_later(timeout, changed.expire)
    try:
        while True:
            generations = {m.stable_generation for m in crew}
            if len(generations) == 1 and -1 not in generations:
                elapsed = time.perf_counter() - t0
                return elapsed, generations.pop()
            if changed.expired or time.perf_counter() - t0 >= timeout:
                errors = sorted({m.last_error for m in crew})
                raise RuntimeError(f"group {group} not Stable after {timeout} s: generations {sorted(generations)[:5]}, last errors {errors}")
            await changed.wait()
    finally:
        deadline.cancel()
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def big_group(bootstrap: str, members: int) -> tuple[float, int]:
    """One connection per member, as real consumers have: a member parked in JoinGroup must not hold
    up another member's answers (a connection answers in request order)."""
    conns = [await AioConnection.open(bootstrap) for _ in range(members)]
    try:
        return await form_group(conns, f"big-group-{members}-{time.time_ns()}", members)
    finally:
        for c in conns:
            await c.close()


def run_client(coroutine: Any) -> Any:
    """Run a group-forming client to completion on uvloop (asyncio's own loop if it is missing), as
    bench.loadgen's workers do: the client shares the machine's cores with the broker under test, and
    asyncio's pure-Python loop was a third of its CPU per group. Same requests, same order, either way."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


async def many_groups(bootstrap: str, groups: int, slots: int = 200) -> float:
    """`slots` workers, each with three connections of its own, form groups of 3 one after another."""
    stamp = time.time_ns()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for g in range(groups):
        queue.put_nowait(g)

    async def worker() -> None:
        conns = [await AioConnection.open(bootstrap) for _ in range(3)]
        try:
            while not queue.empty():
                g = queue.get_nowait()
                await form_group(conns, f"small-{stamp}-{g}", 3)
        finally:
            for c in conns:
                await c.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(slots, groups))))
    return time.perf_counter() - t0


def measure(bootstrap: str, ns: argparse.Namespace, client_cores: list[int] | None) -> None:
    # Request rates first, on a broker without thousands of idle members expiring in the background.
    for request in ("heartbeat", "offset_commit"):
        r = run_load(bootstrap, request, 64, ns.pipeline, ns.seconds, processes=ns.processes, client_cores=client_cores, tag=request)
        ceiling = ns.ceiling.rate if ns.ceiling else float("nan")
        print(f"{r.line()}   = {r.rate / ceiling:.2f} x ceiling")
    t, generation = asyncio.run(big_group(bootstrap, ns.members))
    print(f"group of {ns.members:,} members: Stable {t * 1000:.0f} ms after the first member-id JoinGroup (generation {generation})")
    t = run_client(many_groups(bootstrap, ns.groups))
    print(f"{ns.groups:,} groups of 3 members: all Stable in {t:.2f} s ({ns.groups / t:,.0f} groups/s)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.group_bench")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--groups", type=int, default=10000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pipeline", type=int, default=8)
    parser.add_argument("--processes", type=int, default=2)
    ns = parser.parse_args(argv)
    server_cores, client_cores = _cores()
    with bare(server_cores) as (address, _):
        ns.ceiling = run_load(address, "api_versions", 64, ns.pipeline, ns.seconds, processes=ns.processes, client_cores=client_cores)
    print(f"bare uvloop ceiling, 64 connections: {ns.ceiling.rate:,.0f} req/s")
    if ns.bootstrap:
        measure(ns.bootstrap, ns, client_cores)
        return
    with groupcoord(server_cores, fsync="never", group_initial_rebalance_delay_ms=0) as (address, _):
        measure(address, ns, client_cores)


if __name__ == "__main__":
    main()
