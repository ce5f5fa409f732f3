"""A kafka-python consumer group of three shares a six-partition topic; with commits after processing
and a stable group, every message is processed exactly once, and a restarted member resumes from the
committed offsets."""
import threading
import time
import uuid

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from tests.support.kafka_python_members import subscribed_consumer
from tests.support.waiting import wait_for

PARTITIONS = 6
MEMBERS = 3
MESSAGES = 600
DEADLINE_S = 60


class Member(threading.Thread):
    def __init__(self, bootstrap, topic, group, sink, lock):
        super().__init__(daemon=True)
        # Metadata first, then subscribe: see tests/support/kafka_python_members.py for why.
        self.consumer = subscribed_consumer(bootstrap, topic, group, client_id=f"member-{uuid.uuid4().hex[:6]}")
        self.sink, self.lock = sink, lock
        self.stopping = threading.Event()
        self.assigned = 0
        self.failure = None

    def run(self):
        try:
            while not self.stopping.is_set():
                batches = self.consumer.poll(timeout_ms=300)
                self.assigned = len(self.consumer.assignment())
                records = [r for rs in batches.values() for r in rs]
                if records:
                    with self.lock:                                   # process ...
                        self.sink.extend((r.partition, r.offset, r.value) for r in records)
                    self.consumer.commit()                           # ... then commit
        except Exception as exc:  # surfaced by the test thread
            self.failure = exc
        finally:
            self.consumer.close()


def test_a_group_of_three_consumes_every_message_exactly_once(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = f"shared-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    admin.close()
    sink, lock = [], threading.Lock()
    members = [Member(bootstrap, topic, group, sink, lock) for _ in range(MEMBERS)]
    for m in members:
        m.start()
    try:
        assert wait_for(lambda: [m.assigned for m in members] == [2, 2, 2], DEADLINE_S), \
            [m.assigned for m in members]
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        for i in range(MESSAGES):
            producer.send(topic, key=str(i).encode(), value=str(i).encode())
        producer.flush(timeout=DEADLINE_S)
        producer.close()
        assert wait_for(lambda: len(sink) >= MESSAGES, DEADLINE_S), len(sink)
        time.sleep(0.5)                       # any duplicate delivery would show up by now
    finally:
        for m in members:
            m.stopping.set()
        for m in members:
            m.join(timeout=30)
    assert [m.failure for m in members] == [None] * MEMBERS
    values = sorted(int(v) for _, _, v in sink)
    assert values == list(range(MESSAGES))
    assert len({(p, o) for p, o, _ in sink}) == MESSAGES

    # A new member of the same group starts from the committed offsets: nothing is left to read.
    # Metadata first, then subscribe, as the members above: a consumer created with its topic joins twice, and
    # kafka-python 3.0.x can lose the second join's assignment to a short poll (it then stops heartbeating).
    late = subscribed_consumer(bootstrap, topic, group, client_id="late")
    leftovers = []

    def settled():
        for records in late.poll(timeout_ms=100).values():
            leftovers.extend(records)
        return len(late.assignment()) == PARTITIONS

    try:
        assert wait_for(settled, DEADLINE_S)
        for _ in range(5):
            settled()
        assert leftovers == []
        assert sum(late.committed(tp) for tp in late.assignment()) == MESSAGES
    finally:
        late.close()
