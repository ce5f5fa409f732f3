"""Share groups (KIP-932) beside consumer groups over real sockets: records/s acknowledged by a 4-member share
group and records/s consumed and committed by a 4-member KIP-848 consumer group, on the same topic, in one run.

Both groups read every record of a 4-partition topic once. Each consumer-group member fetches its partition
and commits what it read after every fetch (OffsetCommit with its member epoch), as an at-least-once client
does; each share-group member ShareFetches with the previous fetch's records acknowledged (ACCEPT) in the same
request, as KafkaShareConsumer does with implicit acknowledgement. The figure is records / seconds from the
first fetch to the last acknowledgement (share) or commit (consumer). Neither decodes record bodies; the
consumer member reads batch headers to move its position, the share member acknowledges the acquired ranges.

    python -m bench.share_bench                        # starts its own groupcoord (fsync=never)
    python -m bench.share_bench --bootstrap HOST:PORT  # or measures any broker (e.g. Kafka 4.3)
    python -m bench.share_bench --runs 3               # the median of 3 runs (each on a topic of its own)
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from groupcoord.protocol.record_batch import encode_batch, iter_batches

from .aioclient import AioConnection
from .consumer_group_bench import _Member, reconciled
from .servers import groupcoord
from .wire_bench import _cores

PRODUCE, FETCH, OFFSET_COMMIT, CREATE_TOPICS = 0, 1, 8, 19
SHARE_GROUP_HEARTBEAT, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 78, 79
MEMBERS = 4
PARTITIONS = 4
BATCH = 500
TIMEOUT_S = 300.0


async def _produce(conn: AioConnection, topic: str, records: int) -> None:
    """Batches of BATCH records, round robin over the partitions, a window of requests in flight."""
    pending = []
    for n, start in enumerate(range(0, records, BATCH)):
        values = [(None, f"job-{i}".encode().ljust(100, b"."), ()) for i in range(start, min(start + BATCH, records))]
        pending.append(conn.send(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout": 30000, "topic_data": [
            {"name": topic, "partition_data": [{"index": n % PARTITIONS, "records": encode_batch(values)}]}]}))
        if len(pending) >= 16:
            for answer in await asyncio.gather(*pending):
                assert answer.responses[0].partition_responses[0].error_code == 0
            pending = []
    await asyncio.gather(*pending)


class _ShareMember:
    def __init__(self, conn: AioConnection, beat: AioConnection, group: str, topic: str, topic_id: uuid.UUID) -> None:
        self.conn, self.beat, self.group, self.topic, self.topic_id = conn, beat, group, topic, topic_id
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.partitions: list[int] = []
        self.session_epoch = 0
        self.pending: dict[int, list[tuple[int, int]]] = {}
        self.acknowledged = 0
        self.stopping = False

    async def join(self) -> None:
        topics: list[str] | None = [self.topic]
        while not self.partitions:
            answer = await self.beat.send(SHARE_GROUP_HEARTBEAT, 1, {"group_id": self.group, "member_id": self.member_id,
                                                                     "member_epoch": self.epoch, "rack_id": None,
                                                                     "subscribed_topic_names": topics})
            assert answer.error_code == 0, answer
            topics, self.epoch = None, answer.member_epoch
            if answer.assignment is not None:
                self.partitions = [p for tp in answer.assignment.topic_partitions for p in tp.partitions]
            if not self.partitions:
                await asyncio.sleep(0.1)

    async def heartbeats(self) -> None:
        while not self.stopping:
            await asyncio.sleep(1.0)
            answer = await self.beat.send(SHARE_GROUP_HEARTBEAT, 1, {"group_id": self.group, "member_id": self.member_id,
                                                                     "member_epoch": self.epoch, "rack_id": None,
                                                                     "subscribed_topic_names": None})
            if answer.error_code == 0:
                self.epoch = answer.member_epoch

    async def fetch(self, max_wait_ms: int = 100) -> None:
        """One ShareFetch carrying the acknowledgements of the previous one."""
        acks = self.pending
        self.pending = {}
        parts = sorted(set(self.partitions) | set(acks))
        answer = await self.conn.send(SHARE_FETCH, 1, {
            "group_id": self.group, "member_id": self.member_id, "share_session_epoch": self.session_epoch,
            "max_wait": max_wait_ms, "min_bytes": 1, "max_bytes": 8 << 20, "max_records": 500, "batch_size": 500,
            "topics": [{"topic_id": self.topic_id, "partitions": [
                {"partition_index": p, "acknowledgement_batches": [
                    {"first_offset": f, "last_offset": l, "acknowledge_types": [1]} for f, l in acks.get(p, [])]}
                for p in parts]}],
            "forgotten_topics_data": []})
        assert answer.error_code == 0, answer
        self.session_epoch = self.session_epoch + 1
        for t in answer.responses:
            for p in t.partitions:
                if acks.get(p.partition_index):
                    assert p.acknowledge_error_code == 0, p
                    self.acknowledged += sum(l - f + 1 for f, l in acks[p.partition_index])
                ranges = [(a.first_offset, a.last_offset) for a in p.acquired_records]
                if ranges:
                    self.pending.setdefault(p.partition_index, []).extend(ranges)

    async def flush(self) -> None:
        if self.pending:
            await self.fetch(max_wait_ms=0)


async def share_group(bootstrap: str, topic: str, topic_id: uuid.UUID, records: int, produce: Any) -> float:
    group = f"share-bench-{time.time_ns()}"
    members = [_ShareMember(await AioConnection.open(bootstrap), await AioConnection.open(bootstrap), group, topic,
                            topic_id) for _ in range(MEMBERS)]
    await asyncio.gather(*(m.join() for m in members))
    beats = [asyncio.create_task(m.heartbeats()) for m in members]
    # Open the share sessions on the still-empty topic: the share partitions start at its end (offset 0).
    await asyncio.gather(*(m.fetch(max_wait_ms=0) for m in members))
    await produce()
    t0 = time.perf_counter()

    async def work(m: _ShareMember) -> None:
        while sum(x.acknowledged + sum(l - f + 1 for ps in x.pending.values() for f, l in ps) for x in members) < records:
            await m.fetch()
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise TimeoutError("share group did not finish")
        await m.flush()

    await asyncio.gather(*(work(m) for m in members))
    elapsed = time.perf_counter() - t0
    for m in members:
        m.stopping = True
    for task in beats:
        task.cancel()
    assert sum(m.acknowledged for m in members) == records, [m.acknowledged for m in members]
    for m in members:
        await m.conn.close()
        await m.beat.close()
    return elapsed


async def consumer_group(bootstrap: str, topic: str, topic_id: uuid.UUID, records: int) -> float:
    group = f"consumer-bench-{time.time_ns()}"
    progress = asyncio.Event()  # the members set it after each answer; this bench polls `reconciled` instead
    members = [_Member(await AioConnection.open(bootstrap), group, topic, progress) for _ in range(MEMBERS)]
    tasks = [asyncio.create_task(m.run()) for m in members]
    while not reconciled(members, PARTITIONS):
        await asyncio.sleep(0.05)
    conns = [await AioConnection.open(bootstrap) for _ in members]
    done = [0]
    t0 = time.perf_counter()

    async def work(m: _Member, conn: AioConnection) -> None:
        positions = {p: 0 for ps in m.owned.values() for p in ps}
        while done[0] < records:
            answer = await conn.send(FETCH, 13, {
                "cluster_id": None, "replica_id": -1, "max_wait": 100, "min_bytes": 1, "max_bytes": 8 << 20,
                "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
                "topics": [{"topic_id": topic_id, "partitions": [
                    {"partition": p, "current_leader_epoch": -1, "fetch_offset": o, "last_fetched_epoch": -1,
                     "log_start_offset": -1, "partition_max_bytes": 8 << 20} for p, o in positions.items()]}]})
            read = 0
            for t in answer.responses:
                for p in t.partitions:
                    for _pos, header in iter_batches(p.records or b"", verify=False):
                        if header.base_offset + header.last_offset_delta >= positions[p.partition_index]:
                            read += header.base_offset + header.last_offset_delta + 1 - max(
                                header.base_offset, positions[p.partition_index])
                            positions[p.partition_index] = header.base_offset + header.last_offset_delta + 1
            if read:
                committed = await conn.send(OFFSET_COMMIT, 9, {
                    "group_id": group, "generation_id_or_member_epoch": m.epoch, "member_id": m.member_id,
                    "group_instance_id": None, "topics": [{"name": topic, "partitions": [
                        {"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1,
                         "committed_metadata": ""} for p, o in positions.items()]}]})
                assert all(p.error_code == 0 for t in committed.topics for p in t.partitions), committed
                done[0] += read
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise TimeoutError("consumer group did not finish")

    await asyncio.gather(*(work(m, c) for m, c in zip(members, conns)))
    elapsed = time.perf_counter() - t0
    assert done[0] == records, done
    for m in members:
        m.leaving = True
    await asyncio.gather(*(m.leave() for m in members), return_exceptions=True)
    for task in tasks:
        task.cancel()
    for c in conns:
        await c.close()
    return elapsed


async def run(bootstrap: str, records: int) -> tuple[float, float]:
    admin = await AioConnection.open(bootstrap)
    topic = f"share-bench-topic-{time.time_ns()}"
    created = await admin.send(CREATE_TOPICS, 7, {"topics": [{"name": topic, "num_partitions": PARTITIONS,
                                                              "replication_factor": 1, "assignments": [],
                                                              "configs": []}],
                                                  "timeout": 30000, "validate_only": False})
    assert created.topics[0].error_code == 0, created.topics[0]
    topic_id = created.topics[0].topic_id
    share_s = await share_group(bootstrap, topic, topic_id, records, lambda: _produce(admin, topic, records))
    consumer_s = await consumer_group(bootstrap, topic, topic_id, records)
    await admin.close()
    print(f"{records:,} records of 100 bytes on {PARTITIONS} partitions, {MEMBERS} members each:")
    print(f"  consumer group (KIP-848, fetch + commit):                {records / consumer_s:>10,.0f} records/s ({consumer_s:.2f} s)")
    print(f"  share group (KIP-932, share fetch + piggy-backed acks): {records / share_s:>10,.0f} records/s ({share_s:.2f} s)")
    return consumer_s, share_s


async def runs(bootstrap: str, records: int, count: int) -> None:
    """``count`` runs against one broker, each on a fresh topic; the median of each figure is printed last."""
    results = [await run(bootstrap, records) for _ in range(count)]
    if count > 1:
        consumer = sorted(records / c for c, _ in results)
        share = sorted(records / s for _, s in results)
        print(f"median of {count} runs: consumer group {consumer[count // 2]:,.0f} records/s, "
              f"share group {share[count // 2]:,.0f} records/s "
              f"(consumer {', '.join(f'{x:,.0f}' for x in consumer)}; share {', '.join(f'{x:,.0f}' for x in share)})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.share_bench")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=1, help="runs against the same broker; their median is printed")
    ns = parser.parse_args(argv)
    if ns.bootstrap:
        asyncio.run(runs(ns.bootstrap, ns.records, ns.runs))
        return
    server_cores, _ = _cores()
    with groupcoord(server_cores, fsync="never") as (address, _):
        asyncio.run(runs(address, ns.records, ns.runs))


if __name__ == "__main__":
    main()
