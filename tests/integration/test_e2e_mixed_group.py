"""One consumer group made of three different client libraries (kafka-python, aiokafka, confluent-kafka), all on
the "range" assignor, consuming a 6-partition topic through a membership change of every kind: a member
joins, one leaves cleanly, one dies (SIGKILL, no LeaveGroup) and is only noticed when its session expires.

Every member processes a batch, then commits it synchronously. So a record is processed twice only when a
processing of it was never covered by an acknowledged commit: the commit failed because a rebalance had begun
(the partition moved on, or came back and was re-read from the committed offset), or the member was killed
between processing and committing. Duplicates are therefore asserted to be exactly of that kind, and no
record may be lost.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

import pytest
from kafka import KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from tests.support.kafka_python_members import subscribed_consumer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.timeout(170)

PARTITIONS = 6
CHUNK = 300  # records produced per phase
SESSION_TIMEOUT_MS = 6000  # the broker's minimum: the dead member is noticed as early as Kafka allows
DEADLINE_S = 45


@dataclass(frozen=True)
class Processing:
    partition: int
    offset: int
    member: str
    committed: bool  # covered by a commit the broker acknowledged


class Member:
    """What the test observes of any member, whatever its client: what it processed and what it owns."""

    name = ""

    def __init__(self) -> None:
        self.processings: list[Processing] = []
        self.assignment: frozenset[int] = frozenset()
        self.failure: BaseException | None = None
        self.lock = threading.Lock()

    def record(self, batch: list[tuple[int, int]], committed: bool) -> None:
        with self.lock:
            self.processings.extend(Processing(p, o, self.name, committed) for p, o in batch)

    def snapshot(self) -> list[Processing]:
        with self.lock:
            return list(self.processings)


def commit_offsets(batch: list[tuple[int, int]]) -> dict[int, int]:
    offsets: dict[int, int] = {}
    for partition, offset in batch:
        offsets[partition] = max(offsets.get(partition, 0), offset + 1)
    return offsets


class KafkaPythonMember(Member, threading.Thread):
    name = "kafka-python"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        Member.__init__(self)
        threading.Thread.__init__(self, daemon=True)
        self.consumer = subscribed_consumer(bootstrap, topic, group, self.name)
        self.topic = topic
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                # a poll that times out in the middle of a rejoin can leave kafka-python 3.0.12 silent until its
                # session expires; a long poll (it returns as soon as records arrive) covers a whole join round trip
                polled = self.consumer.poll(timeout_ms=1000)
                self.assignment = frozenset(tp.partition for tp in self.consumer.assignment())
                batch = [(r.partition, r.offset) for records in polled.values() for r in records]
                if not batch:
                    continue
                try:
                    self.consumer.commit({TopicPartition(self.topic, p): OffsetAndMetadata(o, "", -1)
                                          for p, o in commit_offsets(batch).items()}, timeout_ms=5000)
                    self.record(batch, committed=True)
                except Exception:  # noqa: BLE001 - refused because a rebalance began: the records may come again
                    self.record(batch, committed=False)
        except BaseException as exc:  # reported by the test
            self.failure = exc
        finally:
            self.consumer.close(autocommit=False)  # a clean leave: LeaveGroup


class AiokafkaMember(Member, threading.Thread):
    name = "aiokafka"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        Member.__init__(self)
        threading.Thread.__init__(self, daemon=True)
        self.bootstrap, self.topic, self.group = bootstrap, topic, group
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            asyncio.run(self.consume())
        except BaseException as exc:  # reported by the test
            self.failure = exc

    async def consume(self) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka import TopicPartition as AioTopicPartition
        from aiokafka.coordinator.assignors.range import RangePartitionAssignor

        consumer = AIOKafkaConsumer(self.topic, bootstrap_servers=self.bootstrap, group_id=self.group,
                                    client_id=self.name, enable_auto_commit=False, auto_offset_reset="earliest",
                                    partition_assignment_strategy=(RangePartitionAssignor,),
                                    session_timeout_ms=10_000, heartbeat_interval_ms=300, max_poll_interval_ms=30_000)
        await consumer.start()
        try:
            while not self.stopping.is_set():
                polled = await consumer.getmany(timeout_ms=100)
                self.assignment = frozenset(tp.partition for tp in consumer.assignment())
                batch = [(r.partition, r.offset) for records in polled.values() for r in records]
                if not batch:
                    continue
                try:
                    await consumer.commit({AioTopicPartition(self.topic, p): o for p, o in commit_offsets(batch).items()})
                    self.record(batch, committed=True)
                except Exception:  # noqa: BLE001 - refused because a rebalance began: the records may come again
                    self.record(batch, committed=False)
        finally:
            await consumer.stop()


def confluent_settings(bootstrap: str, group: str, client_id: str) -> dict:
    return {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "partition.assignment.strategy": "range",
            "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": 300, "max.poll.interval.ms": 30_000}


class ConfluentMember(Member, threading.Thread):
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        Member.__init__(self)
        threading.Thread.__init__(self, daemon=True)
        from confluent_kafka import Consumer

        self.consumer = Consumer(confluent_settings(bootstrap, group, self.name))
        self.consumer.subscribe([topic])
        self.topic = topic
        self.stopping = threading.Event()

    def run(self) -> None:
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as CkTopicPartition

        try:
            while not self.stopping.is_set():
                messages = self.consumer.consume(num_messages=500, timeout=0.1)
                self.assignment = frozenset(tp.partition for tp in self.consumer.assignment())
                batch = [(m.partition(), m.offset()) for m in messages if m.error() is None]
                if not batch:
                    continue
                try:
                    self.consumer.commit(offsets=[CkTopicPartition(self.topic, p, o) for p, o in commit_offsets(batch).items()],
                                         asynchronous=False)
                    self.record(batch, committed=True)
                except KafkaException:  # refused because a rebalance began: the records may come again
                    self.record(batch, committed=False)
        except BaseException as exc:  # reported by the test
            self.failure = exc
        finally:
            self.consumer.close()


# The member that gets SIGKILLed lives in its own process. It reports each processed batch ("P partition:offset
# ...") and then each acknowledged commit of it ("C"), so the test knows which processings were committed.
CHILD = textwrap.dedent("""
    import json, sys
    from confluent_kafka import Consumer, KafkaException, TopicPartition
    topic, settings = sys.argv[1], json.loads(sys.argv[2])
    consumer = Consumer(settings)
    consumer.subscribe([topic])
    while True:
        messages = [m for m in consumer.consume(num_messages=50, timeout=0.1) if m.error() is None]
        print("A " + " ".join(str(tp.partition) for tp in consumer.assignment()), flush=True)
        if not messages:
            continue
        print("P " + " ".join(f"{m.partition()}:{m.offset()}" for m in messages), flush=True)
        offsets = {}
        for m in messages:
            offsets[m.partition()] = max(offsets.get(m.partition(), 0), m.offset() + 1)
        try:
            consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
            print("C", flush=True)
        except KafkaException:
            print("F", flush=True)
""")


class ChildProcessMember(Member):
    name = "confluent-kafka-child"

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        import json

        super().__init__()
        self.killed = False
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, topic, json.dumps(confluent_settings(bootstrap, group, self.name))],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self) -> None:
        assert self.proc.stdout is not None
        pending: list[tuple[int, int]] = []
        for line in self.proc.stdout:
            kind, _, rest = line.strip().partition(" ")
            if kind == "A":
                self.assignment = frozenset(int(p) for p in rest.split())
            elif kind == "P":
                pending = [(int(p), int(o)) for p, o in (item.split(":") for item in rest.split())]
            elif kind in ("C", "F"):
                self.record(pending, committed=kind == "C")
                pending = []
        self.record(pending, committed=False)  # processed, then killed before its commit was acknowledged
        if not self.killed:
            self.failure = RuntimeError(f"the child consumer exited by itself with status {self.proc.wait()}")

    def kill(self) -> None:
        self.killed = True
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.reader.join(10)


def test_a_group_of_three_client_libraries_survives_a_join_a_leave_and_a_crash(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = f"mixed-{uuid.uuid4().hex[:8]}", f"mixed-group-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    produced: list[tuple[int, int]] = []

    def produce_chunk() -> set[tuple[int, int]]:
        start = len(produced)
        futures = [producer.send(topic, value=str(i).encode(), partition=i % PARTITIONS) for i in range(start, start + CHUNK)]
        producer.flush(timeout=DEADLINE_S)
        chunk = {(m.partition, m.offset) for m in (f.get(timeout=DEADLINE_S) for f in futures)}
        produced.extend(chunk)
        return chunk

    def view():
        return next((v for v in groupcoord_broker.groups.iter_groups() if v.group_id == group), None)

    members: list[Member] = []

    def everyone() -> list[Processing]:
        return [p for m in members for p in m.snapshot()]

    def consumed(records: set[tuple[int, int]]) -> bool:
        return records <= {(p.partition, p.offset) for p in everyone()}

    def settled(expected: list[Member]) -> bool:
        """Stable at the broker with exactly these members, each of which sees a share of the six partitions."""
        group_view = view()
        owned = [p for m in expected for p in m.assignment]
        return (group_view is not None and group_view.state == "Stable" and len(group_view.members) == len(expected)
                and sorted(owned) == list(range(PARTITIONS)) and all(m.assignment for m in expected))

    def failures():
        return [(m.name, m.failure) for m in members if m.failure is not None]

    def until(condition, seconds: float = DEADLINE_S) -> bool:
        """wait_for that gives up as soon as a member's client failed, so the failure is what gets reported."""
        return wait_for(lambda: condition() or bool(failures()), seconds) and not failures()

    kafka_python = aiokafka = late_joiner = child = None
    try:
        # Members arrive one at a time, each once the group is stable: kafka-python 3.0.12 can stall when a join
        # races its first metadata (see tests/support/kafka_python_members.py).
        for kind in (KafkaPythonMember, AiokafkaMember, ChildProcessMember):
            member = kind(bootstrap, topic, group)
            members.append(member)
            if isinstance(member, threading.Thread):
                member.start()
            assert until(lambda: settled(members)), (view(), [(m.name, m.assignment) for m in members], failures())
        kafka_python, aiokafka, child = members
        assert view().protocol == "range"
        first = produce_chunk()
        assert until(lambda: consumed(first)), failures()
        assert all(m.snapshot() for m in members)  # range over six partitions: two each, all three consume

        # (a) a fourth member joins: a rebalance, after which it consumes its share too
        generation = view().generation
        late_joiner = ConfluentMember(bootstrap, topic, group)
        members.append(late_joiner)
        late_joiner.start()
        assert until(lambda: settled(members) and view().generation > generation), (view(), failures())
        second = produce_chunk()
        assert until(lambda: consumed(second)), failures()
        for member in members:
            assert {(p.partition, p.offset) for p in member.snapshot()} & second, f"{member.name} consumed none after the join"

        # (b) kafka-python closes: its LeaveGroup rebalances at once, well before any session could expire
        generation = view().generation
        left_at = time.monotonic()
        kafka_python.stopping.set()
        kafka_python.join(DEADLINE_S)
        assert not kafka_python.is_alive() and kafka_python.failure is None, kafka_python.failure
        survivors = [aiokafka, child, late_joiner]
        assert until(lambda: settled(survivors) and view().generation > generation, 10), (view(), failures())
        assert time.monotonic() - left_at < SESSION_TIMEOUT_MS / 1000, "the leave waited for a session expiry"
        third = produce_chunk()
        assert until(lambda: consumed(third)), failures()

        # (c) the child is SIGKILLed mid-stream: no LeaveGroup; the others take over once its session expires
        generation = view().generation
        fourth = produce_chunk()
        assert until(lambda: {(p.partition, p.offset) for p in child.snapshot()} & fourth), failures()
        child.kill()
        killed_at = time.monotonic()
        fifth = produce_chunk()
        survivors = [aiokafka, late_joiner]
        assert until(lambda: settled(survivors) and view().generation > generation), (view(), failures())
        # noticed through the session expiry alone: its last heartbeat was at most one interval before the kill
        assert time.monotonic() - killed_at > SESSION_TIMEOUT_MS / 1000 - 1
        assert until(lambda: consumed(fourth | fifth)), failures()
        assert not failures(), failures()
    finally:
        for member in members:
            if isinstance(member, threading.Thread):
                member.stopping.set()
        for member in members:
            if isinstance(member, threading.Thread):
                member.join(DEADLINE_S)
        if child is not None and child.proc.poll() is None:
            child.kill()
        producer.close()

    # No loss: the union of everything processed is exactly what was produced.
    processings = everyone()
    counts = Counter((p.partition, p.offset) for p in processings)
    assert set(counts) == set(produced) and len(produced) == 5 * CHUNK
    # Duplicates only where the protocol allows them: a record comes again only after a processing of it that no
    # acknowledged commit covered, so every extra processing is matched by an uncommitted one.
    uncommitted = Counter((p.partition, p.offset) for p in processings if not p.committed)
    committed = Counter((p.partition, p.offset) for p in processings if p.committed)
    assert [r for r, n in counts.items() if n - 1 > uncommitted[r]] == []
    assert [r for r, n in committed.items() if n > 1] == []
