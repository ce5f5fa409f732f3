"""KIP-848 consumer-group figures over real sockets: how long a group of N members (one connection each) takes
from the first ConsumerGroupHeartbeat to a reconciled assignment, and how long it takes to settle again after
a quarter of the members leave.

Each member behaves like a KIP-848 client that reconciles at once: it heartbeats immediately after its
assignment changed (to acknowledge revocations and ask for what is still owned by others) and otherwise every
heartbeat interval the broker asks for. "Reconciled" means every member's epoch equals the group epoch it was
last told, and the members' assignments cover every partition exactly once.

    python -m bench.consumer_group_bench                        # starts its own groupcoord (fsync=never)
    python -m bench.consumer_group_bench --bootstrap HOST:PORT  # or measures any broker (e.g. Kafka 4.x)
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from .aioclient import AioConnection
from .servers import groupcoord
from .wire_bench import _cores

CONSUMER_GROUP_HEARTBEAT, CREATE_TOPICS, METADATA = 68, 19, 3
TIMEOUT_S = 300.0


class _Member:
    def __init__(self, conn: AioConnection, group: str, topic: str) -> None:
        self.conn, self.group, self.topic = conn, group, topic
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.owned: dict[uuid.UUID, tuple[int, ...]] = {}
        self.interval_s = 5.0
        self.leaving = False
        self.changed = asyncio.Event()

    def _body(self, full: bool) -> dict[str, Any]:
        return {"group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch, "instance_id": None,
                "rack_id": None, "rebalance_timeout": 60000 if full else -1,
                "subscribed_topic_names": [self.topic] if full else None, "subscribed_topic_regex": None,
                "server_assignor": None,
                "topic_partitions": [{"topic_id": t, "partitions": list(ps)} for t, ps in self.owned.items()]}

    async def run(self) -> None:
        full = True
        while not self.leaving:
            answer = await self.conn.send(CONSUMER_GROUP_HEARTBEAT, 1, self._body(full))
            if answer.error_code != 0:
                raise RuntimeError(f"{self.member_id}: error {answer.error_code!r} {answer.error_message}")
            full = False
            self.interval_s = answer.heartbeat_interval.total_seconds()
            moved = answer.member_epoch != self.epoch
            self.epoch = answer.member_epoch
            if answer.assignment is not None:
                new = {tp.topic_id: tuple(tp.partitions) for tp in answer.assignment.topic_partitions}
                moved |= new != self.owned
                self.owned = new
            self.changed.set()
            if not moved:
                try:
                    await asyncio.wait_for(self._leave_requested(), self.interval_s)
                except asyncio.TimeoutError:
                    pass

    async def _leave_requested(self) -> None:
        while not self.leaving:
            await asyncio.sleep(0.05)

    async def leave(self) -> None:
        self.leaving = True
        self.epoch = -1
        await self.conn.send(CONSUMER_GROUP_HEARTBEAT, 1, self._body(False))


def reconciled(members: list[_Member], partitions: int) -> bool:
    owned = [(t, p) for m in members for t, ps in m.owned.items() for p in ps]
    return (len(owned) == partitions == len(set(owned)) and len({m.epoch for m in members}) == 1)


async def wait_reconciled(members: list[_Member], partitions: int, t0: float) -> float:
    while not reconciled(members, partitions):
        if time.perf_counter() - t0 > TIMEOUT_S:
            raise RuntimeError(f"not reconciled after {TIMEOUT_S} s")
        for m in members:
            m.changed.clear()
        await asyncio.wait([asyncio.create_task(m.changed.wait()) for m in members], timeout=1.0,
                           return_when=asyncio.FIRST_COMPLETED)
    return time.perf_counter() - t0


async def run(bootstrap: str, count: int, partitions: int) -> tuple[float, float]:
    """Prints and returns (seconds to reconcile after the first heartbeat, seconds to settle after a quarter
    of the members left)."""
    stamp = time.time_ns()
    topic, group = f"kip848-bench-{stamp}", f"kip848-bench-group-{stamp}"
    admin = await AioConnection.open(bootstrap)
    created = await admin.send(CREATE_TOPICS, 7, {"topics": [{"name": topic, "num_partitions": partitions,
                                                              "replication_factor": 1, "assignments": [],
                                                              "configs": []}],
                                                  "timeout": 30000, "validate_only": False})
    assert created.topics[0].error_code == 0, created.topics[0]
    conns = [await AioConnection.open(bootstrap) for _ in range(count)]
    members = [_Member(c, group, topic) for c in conns]
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(m.run()) for m in members]
    try:
        joined = await wait_reconciled(members, partitions, t0)
        print(f"{count:,} members, {partitions:,} partitions: reconciled {joined * 1000:,.0f} ms after the first "
              f"heartbeat (group epoch {members[0].epoch})")
        leaving, staying = members[: count // 4], members[count // 4:]
        t1 = time.perf_counter()
        await asyncio.gather(*(m.leave() for m in leaving))
        settled = await wait_reconciled(staying, partitions, t1)
        print(f"{len(leaving):,} members leave: the other {len(staying):,} reconciled {settled * 1000:,.0f} ms later")
        return joined, settled
    finally:
        for m in members:
            m.leaving = True
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in conns + [admin]:
            await c.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.consumer_group_bench")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=1000,
                        help="group.consumer.heartbeat.interval.ms of the broker this bench starts")
    ns = parser.parse_args(argv)
    if ns.bootstrap:
        asyncio.run(run(ns.bootstrap, ns.members, ns.partitions))
        return
    server_cores, _ = _cores()
    with groupcoord(server_cores, fsync="never", group_consumer_heartbeat_interval_ms=ns.heartbeat_interval_ms) as (
            address, _):
        print(f"groupcoord, group.consumer.heartbeat.interval.ms={ns.heartbeat_interval_ms}")
        asyncio.run(run(address, ns.members, ns.partitions))


if __name__ == "__main__":
    main()
