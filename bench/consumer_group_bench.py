"""KIP-848 consumer-group figures over real sockets: how long a group of N members (one connection each) takes
from the first ConsumerGroupHeartbeat to a reconciled assignment, and how long it takes to settle again after
a quarter of the members leave.

Each member behaves like a KIP-848 client that reconciles at once: it heartbeats immediately after its
assignment changed (to acknowledge revocations and ask for what is still owned by others) and otherwise every
heartbeat interval the broker asks for. "Reconciled" means every member is at one epoch, the members'
assignments cover every partition exactly once, and ConsumerGroupDescribe says the group is Stable at that
epoch (so members parked by assignment batching do not count as reconciled).

    python -m bench.consumer_group_bench                        # starts its own groupcoord (fsync=never)
    python -m bench.consumer_group_bench --assignment-interval-ms 0   # target computed in every bumping heartbeat
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

CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE, CREATE_TOPICS, METADATA = 68, 69, 19, 3
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


async def group_stable_at(admin: AioConnection, group: str, epoch: int, count: int) -> bool:
    """The broker's word (ConsumerGroupDescribe): Stable, its target at the group epoch, every member there.

    The members' own view is not enough with assignment batching (Kafka 4.3's default interval): members
    that joined within the interval sit at the old target's epoch with nothing assigned, which looks
    reconciled from the client side while the group is still Assigning."""
    answer = await admin.send(CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": [group], "include_authorized_operations": False})
    g = answer.groups[0]
    return (g.error_code == 0 and g.group_state == "Stable" and g.group_epoch == g.assignment_epoch == epoch
            and len(g.members) == count)


async def wait_reconciled(members: list[_Member], partitions: int, t0: float,
                          admin: AioConnection | None = None) -> float:
    while not (reconciled(members, partitions)
               and (admin is None or await group_stable_at(admin, members[0].group, members[0].epoch, len(members)))):
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
        joined = await wait_reconciled(members, partitions, t0, admin)
        print(f"{count:,} members, {partitions:,} partitions: reconciled {joined * 1000:,.0f} ms after the first "
              f"heartbeat (group epoch {members[0].epoch})")
        leaving, staying = members[: count // 4], members[count // 4:]
        t1 = time.perf_counter()
        await asyncio.gather(*(m.leave() for m in leaving))
        settled = await wait_reconciled(staying, partitions, t1, admin)
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
    parser.add_argument("--assignment-interval-ms", type=int, default=None,
                        help="group.consumer.assignment.interval.ms of the broker this bench starts (default: "
                             "the broker's, 1000 as in Kafka 4.3; 0 assigns in the heartbeat that bumps the epoch)")
    ns = parser.parse_args(argv)
    if ns.bootstrap:
        asyncio.run(run(ns.bootstrap, ns.members, ns.partitions))
        return
    server_cores, _ = _cores()
    settings = {"group_consumer_heartbeat_interval_ms": ns.heartbeat_interval_ms}
    if ns.assignment_interval_ms is not None:
        settings["group_consumer_assignment_interval_ms"] = ns.assignment_interval_ms
    with groupcoord(server_cores, fsync="never", **settings) as (address, _):
        print("groupcoord, " + ", ".join(f"{k.replace('_', '.')}={v}" for k, v in settings.items()))
        asyncio.run(run(address, ns.members, ns.partitions))


if __name__ == "__main__":
    main()
