"""Stock clients form consumer groups of one, three and ten, commit and fetch offsets, and see the group
through their admin APIs, exactly as against Kafka: kafka-python, aiokafka and confluent-kafka."""

import asyncio
import threading
import time
import uuid

import pytest

from tests.support.waiting import wait_for

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
DEADLINE_S = 45


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def partitions_for(size: int) -> int:
    """Enough partitions for every member of a group of `size` to own at least one."""
    return max(PARTITIONS, size)


def create_topic(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


# ---------------------------------------------------------------------------------------------- kafka-python


class PollingConsumer(threading.Thread):
    """A kafka-python consumer polling in its own thread (the client is not thread-safe)."""

    def __init__(self, bootstrap, topic, group):
        from tests.support.kafka_python_members import subscribed_consumer

        super().__init__(daemon=True)
        # subscribes only once the topic's metadata is loaded: kafka-python 3.0.12 can otherwise stall in the
        # rejoin that the arriving metadata causes (tests/support/kafka_python_members.py)
        self.consumer = subscribed_consumer(bootstrap, topic, group, "kafka-python")
        self.stopping = threading.Event()
        self.assignment: set = set()
        self.commit_request: dict | None = None
        self.committed = threading.Event()
        self.failure: BaseException | None = None
        self.commit_refusals: list[str] = []

    def run(self):
        from kafka.errors import CommitFailedError, RebalanceInProgressError

        try:
            while not self.stopping.is_set():
                # long enough to cover a whole join round trip (tests/support/kafka_python_members.py)
                self.consumer.poll(timeout_ms=500)
                self.assignment = set(self.consumer.assignment())
                if self.commit_request is not None:
                    try:
                        self.consumer.commit(self.commit_request)
                    except (RebalanceInProgressError, CommitFailedError) as exc:
                        self.commit_refusals.append(repr(exc))
                        # As an application does, and as kafka-python's error says: finish the rebalance with
                        # poll() and commit again. kafka-python 3.0.12 members rejoin on their own now and then
                        # (a leader whose metadata snapshot changed, a stale REBALANCE_IN_PROGRESS heartbeat
                        # answer), against Kafka 4.3.1 as against groupcoord, so a commit can meet one.
                        continue
                    self.commit_request = None
                    self.committed.set()
        except BaseException as exc:  # reported by the test
            self.failure = exc
        finally:
            self.consumer.close()


@pytest.mark.parametrize("size", [1, 3, 10])
def test_kafka_python_group_shares_partitions_commits_and_is_visible_to_the_admin(groupcoord_broker, size):
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient
    from kafka.structs import OffsetAndMetadata

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("kp-topic"), unique("kp-group")
    partitions = partitions_for(size)
    create_topic(bootstrap, topic, partitions)
    members: list[PollingConsumer] = []
    try:
        # Members arrive one after another, each once the previous ones own partitions: every arrival is a
        # rebalance of a group whose leader already has the topic's metadata. (Starting all three at once
        # can make kafka-python 3.0.12's leader assign before it knows the topic, rejoin at once, and then
        # spin without heartbeating: a client stall, seen as a session expiry on the broker side.)
        for _ in range(size):
            member = PollingConsumer(bootstrap, topic, group)
            members.append(member)
            member.start()
            assert wait_for(lambda: member.assignment), [m.failure for m in members]
        # Each member's view is refreshed by its own thread, so while the last rebalance completes, views of two
        # generations can coexist. Only the final generation has every partition owned exactly once with
        # every member owning some.
        def owned_once_each() -> bool:
            owned = sorted(tp.partition for m in members for tp in m.assignment)
            return owned == list(range(partitions)) and all(m.assignment for m in members)

        assert wait_for(owned_once_each), [(sorted(m.assignment), m.failure) for m in members]

        first = members[0]
        tp = sorted(first.assignment)[0]
        first.commit_request = {tp: OffsetAndMetadata(17, "note", -1)}
        assert first.committed.wait(DEADLINE_S), (first.failure, first.commit_refusals[-3:])

        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            # a member's own rejoin (see PollingConsumer.run) may still be settling: the group is Stable again
            # once it has, with every member
            assert wait_for(lambda: admin.describe_groups([group])[group]["group_state"] == "Stable", DEADLINE_S)
            listed = {g["group_id"]: g for g in admin.list_groups()}
            assert (listed[group]["group_state"], listed[group]["protocol_type"], listed[group]["group_type"]) == ("Stable", "consumer", "classic")
            description = admin.describe_groups([group])[group]
            assert description["group_state"] == "Stable" and description["protocol_data"] == "range"
            assert len(description["members"]) == size
            assert sorted(p for m in description["members"] for a in m["member_assignment"]["assigned_partitions"] for p in a["partitions"]) == list(range(partitions))
            offsets = admin.list_group_offsets({group: None})[group]
            assert offsets[TopicPartition(tp.topic, tp.partition)] == (17, "note", -1)
        finally:
            admin.close()
    finally:
        for m in members:
            m.stopping.set()
        for m in members:
            m.join(10)
    assert all(m.failure is None for m in members), [m.failure for m in members]

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert wait_for(lambda: admin.describe_groups([group])[group]["group_state"] == "Empty", 15)
        assert admin.delete_groups([group]) == {group: "OK"}
        assert group not in [g["group_id"] for g in admin.list_groups()]
    finally:
        admin.close()


# ---------------------------------------------------------------------------------------------- aiokafka


@pytest.mark.parametrize("size", [1, 3, 10])
async def test_aiokafka_group_commits_and_reads_back_its_offsets(groupcoord_broker, size):
    from aiokafka import AIOKafkaConsumer, TopicPartition

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("aio-topic"), unique("aio-group")
    partitions = partitions_for(size)
    await asyncio.to_thread(create_topic, bootstrap, topic, partitions)
    consumers = [
        AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                         heartbeat_interval_ms=300, session_timeout_ms=10_000, auto_offset_reset="earliest")
        for _ in range(size)
    ]
    for c in consumers:
        await c.start()
    try:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            await asyncio.gather(*(c.getmany(timeout_ms=100) for c in consumers))
            if sum(len(c.assignment()) for c in consumers) == partitions and all(c.assignment() for c in consumers):
                break
        assert sum(len(c.assignment()) for c in consumers) == partitions
        for i, c in enumerate(consumers):
            tp = sorted(c.assignment())[0]
            await c.commit({tp: 100 + i})
            assert await c.committed(tp) == 100 + i
        other = TopicPartition(topic, 0)
        assert await consumers[0].committed(other) is not None or other not in consumers[0].assignment()
    finally:
        for c in consumers:
            await c.stop()


# ---------------------------------------------------------------------------------------------- confluent-kafka


@pytest.mark.parametrize("size", [1, 3, 10])
def test_confluent_kafka_group_commits_fetches_and_is_listed(groupcoord_broker, size):
    from confluent_kafka import Consumer, ConsumerGroupState, TopicPartition
    from confluent_kafka.admin import AdminClient

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("ck-topic"), unique("ck-group")
    partitions = partitions_for(size)
    create_topic(bootstrap, topic, partitions)
    consumers = [
        Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                  "session.timeout.ms": 10_000, "heartbeat.interval.ms": 300, "auto.offset.reset": "earliest"})
        for _ in range(size)
    ]
    try:
        for c in consumers:
            c.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            for c in consumers:
                c.poll(0.05)
            if sum(len(c.assignment()) for c in consumers) == partitions and all(c.assignment() for c in consumers):
                break
        assert sum(len(c.assignment()) for c in consumers) == partitions

        mine = consumers[0].assignment()[0]
        consumers[0].commit(offsets=[TopicPartition(topic, mine.partition, 33)], asynchronous=False)
        committed = consumers[0].committed([TopicPartition(topic, mine.partition)], timeout=10)
        assert committed[0].offset == 33

        admin = AdminClient({"bootstrap.servers": bootstrap})
        listed = admin.list_consumer_groups().result(timeout=10)
        assert group in [g.group_id for g in listed.valid]
        described = admin.describe_consumer_groups([group])[group].result(timeout=10)
        assert described.state == ConsumerGroupState.STABLE and len(described.members) == size
    finally:
        for c in consumers:
            c.close()


def test_a_restarted_static_confluent_kafka_member_takes_its_place_back_without_a_rebalance(groupcoord_broker):
    from confluent_kafka import Consumer

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("static-topic"), unique("static-group")
    create_topic(bootstrap, topic)
    settings = {"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": "instance-1",
                "enable.auto.commit": False, "session.timeout.ms": 30_000, "heartbeat.interval.ms": 300}

    def view():
        return next(v for v in groupcoord_broker.groups.iter_groups() if v.group_id == group)

    def run_until_assigned() -> Consumer:
        consumer = Consumer(settings)
        consumer.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and not consumer.assignment():
            consumer.poll(0.05)
        assert len(consumer.assignment()) == PARTITIONS
        return consumer

    first = run_until_assigned()
    assert wait_for(lambda: view().state == "Stable")
    before = view()
    first.close()  # a static member does not send LeaveGroup on close
    assert view().state == "Stable" and len(view().members) == 1

    second = run_until_assigned()
    try:
        after = view()
        assert after.generation == before.generation  # no rebalance: the instance took its slot back
        assert after.members[0].group_instance_id == "instance-1"
        assert after.members[0].member_id != before.members[0].member_id
    finally:
        second.close()


def test_a_restarted_static_kafka_python_member_takes_its_place_back_without_a_rebalance(groupcoord_broker):
    from kafka import KafkaConsumer

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("static-kp-topic"), unique("static-kp-group")
    create_topic(bootstrap, topic)

    def view():
        return next(v for v in groupcoord_broker.groups.iter_groups() if v.group_id == group)

    def run_until_assigned() -> KafkaConsumer:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, group_instance_id="instance-1",
                                 enable_auto_commit=False, session_timeout_ms=30_000, heartbeat_interval_ms=300)
        # metadata first, then subscribe: see tests/support/kafka_python_members.py for the client stall this avoids
        assert wait_for(lambda: consumer.partitions_for_topic(topic))
        consumer.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and len(consumer.assignment()) < PARTITIONS:
            consumer.poll(timeout_ms=100)
        assert len(consumer.assignment()) == PARTITIONS
        return consumer

    first = run_until_assigned()
    assert wait_for(lambda: view().state == "Stable")
    before = view()
    first.close(autocommit=False)  # a static member does not send LeaveGroup on close
    assert view().state == "Stable" and len(view().members) == 1

    second = run_until_assigned()
    try:
        after = view()
        assert after.generation == before.generation  # no rebalance: the instance took its slot back
        assert after.state == "Stable" and len(after.members) == 1
        assert after.members[0].group_instance_id == "instance-1"
        assert after.members[0].member_id != before.members[0].member_id
    finally:
        second.close(autocommit=False)


async def test_a_restarted_static_aiokafka_member_takes_its_place_back_without_a_rebalance(groupcoord_broker):
    from aiokafka import AIOKafkaConsumer

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("static-aio-topic"), unique("static-aio-group")
    await asyncio.to_thread(create_topic, bootstrap, topic)

    def view():
        return next(v for v in groupcoord_broker.groups.iter_groups() if v.group_id == group)

    async def run_until_assigned() -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, group_instance_id="instance-1",
                                    enable_auto_commit=False, session_timeout_ms=30_000, heartbeat_interval_ms=300)
        await consumer.start()
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and len(consumer.assignment()) < PARTITIONS:
            await consumer.getmany(timeout_ms=100)
        assert len(consumer.assignment()) == PARTITIONS
        return consumer

    first = await run_until_assigned()
    deadline = time.monotonic() + DEADLINE_S
    while view().state != "Stable":
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    before = view()
    await first.stop()  # a static member does not send LeaveGroup on close
    assert view().state == "Stable" and len(view().members) == 1

    second = await run_until_assigned()
    try:
        after = view()
        assert after.generation == before.generation  # no rebalance: the instance took its slot back
        assert after.state == "Stable" and len(after.members) == 1
        assert after.members[0].group_instance_id == "instance-1"
        assert after.members[0].member_id != before.members[0].member_id
    finally:
        await second.stop()
