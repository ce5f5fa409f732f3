"""KIP-848 end to end: confluent-kafka consumers with ``group.protocol=consumer`` share a 6-partition topic,
consume every record exactly once, and the others take over when one leaves."""

import threading
import time
import uuid

import pytest

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
DEADLINE_S = 45


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(bootstrap: str, topic: str, first: int, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(first, first + count):
        producer.produce(topic, value=str(i).encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0


class Member(threading.Thread):
    """One consumer in its own thread; every record it processes is committed before the next poll."""

    def __init__(self, bootstrap: str, topic: str, group: str, seen: list, lock: threading.Lock) -> None:
        from confluent_kafka import Consumer

        super().__init__(daemon=True)
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
        })
        self.consumer.subscribe([topic])
        self.seen, self.lock = seen, lock
        self.stopping = threading.Event()
        self.assignment: set[int] = set()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                msg = self.consumer.poll(0.2)
                self.assignment = {tp.partition for tp in self.consumer.assignment()}
                if msg is None or msg.error():
                    continue
                with self.lock:
                    self.seen.append(int(msg.value()))
                self.consumer.commit(message=msg, asynchronous=False)
        except BaseException as exc:  # reported by the test
            self.failure = exc
        finally:
            self.consumer.close()  # leaves the group (epoch -1)


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.mark.parametrize("assignment_interval_ms", [0, 1000], ids=["assign-in-heartbeat", "kafka-default-batching"])
def test_three_consumer_protocol_members_share_and_take_over(groupcoord_broker_factory, assignment_interval_ms):
    """Also at the daemon's (and Kafka 4.3's) default group.consumer.assignment.interval.ms: a real client
    whose join lands within the interval is parked at the old target and gets its share a heartbeat later."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = groupcoord_broker_factory(group_consumer_assignment_interval_ms=assignment_interval_ms).bootstrap_servers
    topic, group = unique("kip848-topic"), unique("kip848-group")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    produce(bootstrap, topic, 0, 60)

    seen: list[int] = []
    lock = threading.Lock()
    members = [Member(bootstrap, topic, group, seen, lock) for _ in range(3)]
    for m in members:
        m.start()
    try:
        wait_until(lambda: len(seen) >= 60, "the first 60 records")
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == list(range(PARTITIONS))
                   and all(len(m.assignment) == 2 for m in members), "two partitions each")
        leaving = members.pop(0)
        leaving.stopping.set()
        leaving.join(30)
        assert leaving.failure is None
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == list(range(PARTITIONS)),
                   "the two remaining members to own every partition")
        produce(bootstrap, topic, 60, 60)
        wait_until(lambda: len(seen) >= 120, "the next 60 records")
        time.sleep(1)  # anything consumed twice would show up now
        with lock:
            assert sorted(seen) == list(range(120))
        assert all(m.failure is None for m in members)

        described = admin.describe_consumer_groups([group])[group].result(30)
        assert len(described.members) == 2
    finally:
        for m in members:
            m.stopping.set()
        for m in members:
            m.join(30)
