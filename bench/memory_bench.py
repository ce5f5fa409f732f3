"""Resident memory of the daemon: per committed offset, and per idle group.

    python -m bench.memory_bench                          # 10,000 groups x 100 partitions of commits
    python -m bench.memory_bench --groups 1000 --partitions 10

Starts `python -m groupcoord serve` (fsync=never: memory, not the disk, is measured), reads its RSS from
/proc, then:

1. commits `--partitions` offsets (one topic) for each of `--groups` standalone groups (generation -1, as
   manual-assignment consumers and admin tools commit), pipelined over a few connections, and reads the
   RSS again: (after - before) / offsets is the memory of one committed offset with its group;
2. joins `--idle-groups` classic groups of one member each (JoinGroup + SyncGroup, then nothing), and
   reads the RSS: the memory of an idle group with a member and its session timer.

Figures, not pass/fail. Bounded: every phase has a time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path

from .aioclient import AioConnection
from .servers import groupcoord

PHASE_LIMIT_S = 600.0
CONNECTIONS = 8
IN_FLIGHT = 64


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def server_pid(bootstrap: str) -> int:
    """The broker listening on `bootstrap`, found through /proc/net/tcp and tcp6 (a JVM listens on an IPv6
    socket even for 127.0.0.1): bench.compare's memory and ctp figures need it for Kafka's JVM too (a server
    started by bench.servers carries its ``pid``)."""
    port = int(bootstrap.rpartition(":")[2])
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    raise RuntimeError(f"no process listens on {bootstrap}")


async def _pipelined(conns: list[AioConnection], requests: list[tuple[int, int, dict]]) -> list:
    """Every request, IN_FLIGHT at a time per connection; answers in request order."""
    answers: list = [None] * len(requests)

    async def lane(k: int) -> None:
        conn = conns[k]
        pending: list[tuple[int, asyncio.Future]] = []
        for i in range(k, len(requests), len(conns)):
            pending.append((i, conn.send(*requests[i])))
            if len(pending) >= IN_FLIGHT:
                j, fut = pending.pop(0)
                answers[j] = await fut
        for j, fut in pending:
            answers[j] = await fut

    await asyncio.wait_for(asyncio.gather(*(lane(k) for k in range(len(conns)))), PHASE_LIMIT_S)
    return answers


async def commit_offsets(bootstrap: str, groups: int, partitions: int) -> None:
    conns = [await AioConnection.open(bootstrap) for _ in range(CONNECTIONS)]
    try:
        topic = "memory-bench"
        created = await conns[0].send(19, 7, {"topics": [{"name": topic, "num_partitions": partitions,
                                                          "replication_factor": 1, "assignments": [], "configs": []}],
                                              "timeout": 30000, "validate_only": False})
        if created.topics[0].error_code != 0:
            raise RuntimeError(f"CreateTopics: {created.topics[0].error_code!r}")
        parts = [{"partition_index": p, "committed_offset": 1_000 + p, "committed_leader_epoch": -1,
                  "committed_metadata": ""} for p in range(partitions)]
        requests = [(8, 8, {"group_id": f"memory-bench-{g:06d}", "generation_id_or_member_epoch": -1, "member_id": "",
                            "group_instance_id": None, "topics": [{"name": topic, "partitions": parts}]})
                    for g in range(groups)]
        answers = await _pipelined(conns, requests)
        failed = sum(1 for a in answers for t in a.topics for p in t.partitions if p.error_code != 0)
        if failed:
            raise RuntimeError(f"{failed:,} partition commits failed")
    finally:
        for conn in conns:
            await conn.close()


async def idle_groups(bootstrap: str, groups: int) -> None:
    conns = [await AioConnection.open(bootstrap) for _ in range(CONNECTIONS)]
    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]

    def join(g: int, member_id: str) -> tuple[int, int, dict]:
        return (11, 9, {"group_id": f"idle-{g:06d}", "session_timeout": 45000, "rebalance_timeout": 60000,
                        "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
                        "protocols": protocols, "reason": None})

    try:
        first = await _pipelined(conns, [join(g, "") for g in range(groups)])
        joined = await _pipelined(conns, [join(g, a.member_id) for g, a in enumerate(first)])
        syncs = [(14, 5, {"group_id": f"idle-{g:06d}", "generation_id": a.generation_id, "member_id": a.member_id,
                          "group_instance_id": None, "protocol_type": "consumer", "protocol_name": a.protocol_name,
                          "assignments": [{"member_id": a.member_id, "assignment": b""}]})
                 for g, a in enumerate(joined)]
        synced = await _pipelined(conns, syncs)
        failed = sum(1 for a in synced if a.error_code != 0)
        if failed:
            raise RuntimeError(f"{failed:,} groups did not reach Stable")
    finally:
        for conn in conns:
            await conn.close()


def settle(pid: int) -> int:
    """RSS once it stops moving (the allocator returns freed request buffers lazily)."""
    last, value = -1, rss_bytes(pid)
    for _ in range(20):
        if abs(value - last) < 256 * 1024:
            break
        time.sleep(0.25)
        last, value = value, rss_bytes(pid)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--idle-groups", type=int, default=10_000)
    ns = parser.parse_args()
    with groupcoord(None, fsync="never", group_initial_rebalance_delay_ms=0) as started:
        bootstrap, pid = started[0], started.pid
        base = settle(pid)
        print(f"daemon at rest: {base / 2**20:,.1f} MiB RSS")
        started = time.perf_counter()
        asyncio.run(commit_offsets(bootstrap, ns.groups, ns.partitions))
        offsets = ns.groups * ns.partitions
        after_commits = settle(pid)
        print(f"{ns.groups:,} groups x {ns.partitions} partitions = {offsets:,} committed offsets in "
              f"{time.perf_counter() - started:.1f} s: {after_commits / 2**20:,.1f} MiB RSS, "
              f"{(after_commits - base) / offsets:,.0f} bytes per committed offset (with its group)")
        if ns.idle_groups:
            asyncio.run(idle_groups(bootstrap, ns.idle_groups))
            after_idle = settle(pid)
            print(f"{ns.idle_groups:,} idle classic groups of one member: {after_idle / 2**20:,.1f} MiB RSS, "
                  f"{(after_idle - after_commits) / ns.idle_groups:,.0f} bytes per idle group")


if __name__ == "__main__":
    main()
