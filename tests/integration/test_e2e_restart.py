"""The daemon dies by SIGKILL while a producer writes (acks=all) and a group member consumes and commits, then
comes back on the same port. Whatever the broker acknowledged before it died must survive: produced records
stay readable, committed offsets are fetched back, and the group resumes from them.

Only acknowledged work is promised. A produce or commit in flight at the kill may or may not have been
written, so the checks are "every acknowledged item is there" and "anything else there was really sent",
never an exact count of in-flight items.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaConnectionError

from tests.support.daemon import Daemon
from tests.support.kafka_python_members import subscribed_consumer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.timeout(150)

PARTITIONS = 3
DEADLINE_S = 45
BEFORE_KILL_RECORDS = 200  # acknowledged produces before the kill, so it lands mid-stream
BEFORE_KILL_COMMITS = 5


class StreamingProducer(threading.Thread):
    """Sends one record at a time (acks=all, idempotent) and notes which ones the broker acknowledged."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                      request_timeout_ms=5000, reconnect_backoff_max_ms=200)
        self.topic = topic
        self.sent: set[bytes] = set()
        self.acked: set[bytes] = set()
        self.stopping = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.stopping.is_set():
            value = f"m{i}".encode()
            self.sent.add(value)
            try:
                # a send in flight at the kill is retried once the daemon is back: it ends acknowledged or failed
                self.producer.send(self.topic, value=value, partition=i % PARTITIONS).get(timeout=DEADLINE_S)
                self.acked.add(value)
            except Exception:  # noqa: BLE001 - an unacknowledged send is allowed to fail around the kill
                pass
            i += 1


class CommittingMember(threading.Thread):
    """A group member that commits what it processed after every poll, noting which commits were acknowledged."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__(daemon=True)
        self.consumer = subscribed_consumer(bootstrap, topic, group, "before-kill")
        self.topic = topic
        self.processed: set[bytes] = set()
        self.attempted: dict[int, set[int]] = {p: set() for p in range(PARTITIONS)}
        self.acked: dict[int, int] = {}
        self.stopping = threading.Event()
        self.loop_exited = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                # long polls (they return as soon as records arrive): see tests/support/kafka_python_members.py
                try:
                    batch = self.consumer.poll(timeout_ms=1000)
                except KafkaConnectionError:  # kafka-python's poll can raise while the broker is down
                    continue  # around the kill; the loop ends when the test sets `stopping`
                if not batch:
                    continue
                offsets = {}
                for tp, records in batch.items():
                    self.processed.update(r.value for r in records)
                    offsets[tp.partition] = records[-1].offset + 1
                for partition, offset in offsets.items():
                    self.attempted[partition].add(offset)
                try:
                    self.consumer.commit({TopicPartition(self.topic, p): _meta(o) for p, o in offsets.items()},
                                         timeout_ms=2000)
                except Exception:  # noqa: BLE001 - a commit around the kill (or a rebalance) may fail
                    continue
                for partition, offset in offsets.items():
                    self.acked[partition] = max(self.acked.get(partition, 0), offset)
        except BaseException as exc:  # reported by the test
            self.failure = exc
        finally:
            self.loop_exited.set()
            self.consumer.close(autocommit=False)


def read_whole_log(bootstrap: str, topic: str) -> list[bytes]:
    """Every record of every partition, from the beginning, outside any group."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=100)
    try:
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        consumer.seek_to_beginning()
        end = consumer.end_offsets(partitions)
        values: list[bytes] = []
        deadline = time.monotonic() + DEADLINE_S
        while any(consumer.position(tp) < end[tp] for tp in partitions):
            assert time.monotonic() < deadline, {tp.partition: (consumer.position(tp), end[tp]) for tp in partitions}
            for records in consumer.poll(timeout_ms=200).values():
                values.extend(r.value for r in records)
        return values
    finally:
        consumer.close()


def _meta(offset: int):
    from kafka.structs import OffsetAndMetadata

    return OffsetAndMetadata(offset, "", -1)


def test_acknowledged_records_and_commits_survive_a_sigkill_and_the_group_resumes_from_them(tmp_path):
    daemon = Daemon(tmp_path / "data", fsync="batch").start()
    producer: StreamingProducer | None = None
    member: CommittingMember | None = None
    try:
        bootstrap = daemon.bootstrap_servers
        topic, group = f"restart-{uuid.uuid4().hex[:8]}", f"restart-group-{uuid.uuid4().hex[:8]}"
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
        admin.close()

        producer = StreamingProducer(bootstrap, topic)
        member = CommittingMember(bootstrap, topic, group)
        producer.start()
        member.start()
        assert wait_for(lambda: len(producer.acked) >= BEFORE_KILL_RECORDS and len(member.acked) == PARTITIONS
                        and sum(len(a) for a in member.attempted.values()) >= BEFORE_KILL_COMMITS), \
            (len(producer.acked), member.acked, member.failure)
        assert producer.is_alive() and member.is_alive()  # both are still mid-stream at the kill

        daemon.kill()
        acked_commits = dict(member.acked)
        member.stopping.set()
        assert member.loop_exited.wait(DEADLINE_S)
        producer.stopping.set()
        daemon.start()
        assert daemon.bootstrap_servers == bootstrap
        producer.join(DEADLINE_S)
        assert not producer.is_alive()
        producer.producer.close(timeout=10)
        member.join(DEADLINE_S)
        assert member.failure is None, member.failure

        # (a) every acknowledged commit is fetched back; a newer offset is only one the member really committed
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            fetched = {tp.partition: meta.offset for tp, meta in admin.list_group_offsets({group: None})[group].items()}
        finally:
            admin.close()
        assert set(fetched) == set(range(PARTITIONS))
        for partition, offset in fetched.items():
            assert offset >= acked_commits[partition], (partition, offset, acked_commits)
            assert offset in member.attempted[partition], (partition, offset, sorted(member.attempted[partition]))

        # (b) every acknowledged record is still in the log, once: the idempotent producer's retry of a send in
        # flight at the kill must not be appended a second time
        log = read_whole_log(bootstrap, topic)
        assert producer.acked <= set(log), sorted(producer.acked - set(log))[:10]
        assert set(log) <= producer.sent
        assert len(log) == len(set(log)), [v for v, n in Counter(log).items() if n > 1][:10]

        # (c) a new member of the same group starts exactly at the committed offsets and reads every
        # acknowledged record it had not processed before the kill
        resumed = subscribed_consumer(bootstrap, topic, group, "after-restart")
        try:
            partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            end = resumed.end_offsets(partitions)
            first_offset: dict[int, int] = {}
            read: list[bytes] = []
            deadline = time.monotonic() + DEADLINE_S
            while any(resumed.position(tp) < end[tp] if tp in resumed.assignment() else True for tp in partitions):
                assert time.monotonic() < deadline, (first_offset, end)
                for tp, records in resumed.poll(timeout_ms=1000).items():
                    first_offset.setdefault(tp.partition, records[0].offset)
                    read.extend(r.value for r in records)
        finally:
            resumed.close(autocommit=False)
        for partition, offset in first_offset.items():
            assert offset == fetched[partition], (partition, offset, fetched)
        assert set(first_offset) == {p for p in range(PARTITIONS) if fetched[p] < end[TopicPartition(topic, p)]}
        assert producer.acked <= member.processed | set(read), sorted(producer.acked - member.processed - set(read))[:10]
        assert set(read) <= producer.sent
    finally:
        if producer is not None:
            producer.stopping.set()
        if member is not None:
            member.stopping.set()
        daemon.kill()
