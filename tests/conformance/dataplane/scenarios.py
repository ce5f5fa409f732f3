"""Data-plane scenarios: what a producer, a consumer and an admin client observe, told as short stories.

Every scenario is `async def scenario(bootstrap) -> list[Observation]`; run against Apache Kafka its
transcript is the expected behaviour, run against groupcoord it is the behaviour under test.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import wraps

from tests.conformance.dataplane import requests as dq
from tests.conformance.dataplane.requests import DataApi
from tests.conformance.dataplane.session import DataSession
from tests.conformance.transcript import Observation

INVALID_ACKS = 2
OFFSETS_TOPIC = "__consumer_offsets"


@dataclass(frozen=True)
class Scenario:
    name: str
    apis: tuple[DataApi, ...]
    run: Callable[[str], Awaitable[list[Observation]]]


SCENARIOS: dict[str, Scenario] = {}


def scenario(*apis: DataApi) -> Callable[[Callable[[DataSession], Awaitable[None]]], Callable[[str], Awaitable[list]]]:
    """Registers a story written against a DataSession as a scenario run against a bootstrap address."""

    def register(story: Callable[[DataSession], Awaitable[None]]) -> Callable[[str], Awaitable[list[Observation]]]:
        @wraps(story)
        async def run(bootstrap: str) -> list[Observation]:
            async with DataSession(bootstrap) as session:
                await story(session)
                return session.transcript.steps

        setup = (DataApi.CREATE_TOPICS, DataApi.METADATA)
        SCENARIOS[story.__name__] = Scenario(story.__name__, tuple(dict.fromkeys(setup + apis)), run)
        return run

    return register


def values(*texts: str) -> list[bytes]:
    return [text.encode() for text in texts]


@scenario(DataApi.PRODUCE, DataApi.FETCH)
async def produce_and_fetch_back(s: DataSession) -> None:
    """acks=1 to both partitions of a topic, a second batch to one of them, then a consumer reads it all."""
    orders = await s.topic("orders", 2)
    await s.produce("Produce to both partitions", {
        (orders, 0): dq.batch(values("a0", "a1", "a2"), timestamps=[s.at(0), s.at(1), s.at(2)]),
        (orders, 1): dq.batch(values("b0", "b1"), timestamps=[s.at(10), s.at(11)])})
    await s.produce("Produce again to partition 0", {
        (orders, 0): dq.batch(values("a3", "a4"), timestamps=[s.at(20), s.at(21)])})
    await s.fetch("Fetch both partitions from offset 0", {(orders, 0): 0, (orders, 1): 0})
    await s.fetch("Fetch partition 0 from the middle of the first batch", {(orders, 0): 1})


@scenario(DataApi.PRODUCE)
async def produce_errors(s: DataSession) -> None:
    """A partition beyond the topic, acks=2, and one bad partition among good ones."""
    orders = await s.topic("orders", 2)
    record = dq.batch(values("x"), timestamps=[s.at(0)])
    await s.produce("Produce to partition 5 of a 2-partition topic", {(orders, 5): record})
    await s.produce("Produce with acks=2", {(orders, 0): record}, acks=INVALID_ACKS)
    await s.produce("Produce mixing a good and a missing partition", {(orders, 1): record, (orders, 7): record})
    await s.fetch("Fetch shows only the good partition's record", {(orders, 0): 0, (orders, 1): 0})


@scenario(DataApi.PRODUCE)
async def produce_to_an_unknown_topic(s: DataSession) -> None:
    """Kafka's Produce never creates a topic, whatever auto.create.topics.enable says: only Metadata does
    (the Java producer asks Metadata first, and that request creates it)."""
    ghost = s.name("topic", "ghost")
    await s.produce("Produce to an unknown topic", {(ghost, 0): dq.batch(values("x"), timestamps=[s.at(0)])})
    await s.describe_topic("Metadata of it afterwards, without auto-creation", ghost)


@scenario(DataApi.PRODUCE)
async def produce_to_an_internal_topic(s: DataSession) -> None:
    """A client may not append to __consumer_offsets; a group lookup first makes sure the topic exists."""
    await s.group("anchor")
    await s.produce("Produce to __consumer_offsets", {(OFFSETS_TOPIC, 0): dq.batch(values("x"), timestamps=[s.at(0)])})


@scenario(DataApi.PRODUCE, DataApi.FETCH)
async def fetch_errors(s: DataSession) -> None:
    orders = await s.topic("orders", 1)
    await s.produce("Produce three records", {(orders, 0): dq.batch(values("r0", "r1", "r2"),
                                                                     timestamps=[s.at(0), s.at(1), s.at(2)])})
    await s.fetch("Fetch beyond the high watermark", {(orders, 0): 10})
    await s.fetch("Fetch before the log start offset", {(orders, 0): -1})
    await s.fetch("Fetch an unknown topic id", {("never-created", 0): 0})
    await s.fetch("Fetch a partition the topic does not have", {(orders, 3): 0})
    await s.fetch("Fetch at the high watermark without waiting", {(orders, 0): 3})
    await s.fetch("Fetch the last record", {(orders, 0): 2})


@scenario(DataApi.PRODUCE, DataApi.LIST_OFFSETS)
async def list_offsets_by_time(s: DataSession) -> None:
    """CreateTime stamps 1000, 3000, 2000 after the base: the max-timestamp record is not the last one."""
    clicks = await s.topic("clicks", 1)
    await s.list_offsets("ListOffsets of an empty partition", clicks,
                         {0: dq.EARLIEST_TIMESTAMP})
    await s.list_offsets("ListOffsets max-timestamp of an empty partition", clicks, {0: dq.MAX_TIMESTAMP})
    await s.produce("Produce three records", {(clicks, 0): dq.batch(values("c0", "c1", "c2"), timestamps=[
        s.at(1000), s.at(3000), s.at(2000)])})
    await s.list_offsets("ListOffsets earliest", clicks, {0: dq.EARLIEST_TIMESTAMP})
    await s.list_offsets("ListOffsets latest", clicks, {0: dq.LATEST_TIMESTAMP})
    await s.list_offsets("ListOffsets max-timestamp", clicks, {0: dq.MAX_TIMESTAMP})
    await s.list_offsets("ListOffsets before every record", clicks, {0: s.at(0)})
    await s.list_offsets("ListOffsets exactly at a record", clicks, {0: s.at(2000)})
    await s.list_offsets("ListOffsets between records", clicks, {0: s.at(1500)})
    await s.list_offsets("ListOffsets after every record", clicks, {0: s.at(4000)})
    await s.list_offsets("ListOffsets of an unknown partition", clicks, {4: dq.LATEST_TIMESTAMP})
    await s.list_offsets("ListOffsets of an unknown topic", s.name("topic", "ghost"), {0: dq.LATEST_TIMESTAMP})


@scenario(DataApi.PRODUCE, DataApi.LIST_OFFSETS, DataApi.FETCH)
async def leader_epochs(s: DataSession) -> None:
    """A single node leads every partition at epoch 0 from its creation; clients validate positions with it."""
    clicks = await s.topic("clicks", 1)
    await s.leader_epochs("Epochs of the empty partition: earliest", clicks, {0: dq.EARLIEST_TIMESTAMP})
    await s.produce("Produce two records", {(clicks, 0): dq.batch(values("c0", "c1"),
                                                                   timestamps=[s.at(1000), s.at(2000)])})
    await s.leader_epochs("Epochs after the produce: earliest", clicks, {0: dq.EARLIEST_TIMESTAMP})
    await s.leader_epochs("Epochs after the produce: latest", clicks, {0: dq.LATEST_TIMESTAMP})
    await s.leader_epochs("Epochs after the produce: by timestamp", clicks, {0: s.at(1500)})


@scenario(DataApi.INIT_PRODUCER_ID, DataApi.PRODUCE, DataApi.FETCH)
async def idempotent_producer_sequences(s: DataSession) -> None:
    """Sequences 0 and 1 land; a retried batch 0 is a duplicate; a gap is out of order; an older epoch loses."""
    events = await s.topic("events", 1)
    producer = await s.init_producer_id("InitProducerId")

    def send(texts: tuple[str, ...], sequence: int, epoch: int | None = None) -> dict:
        sender = replace(producer, base_sequence=sequence, epoch=producer.epoch if epoch is None else epoch)
        return {(events, 0): dq.batch(values(*texts), timestamps=[s.at(i) for i in range(len(texts))],
                                      producer=sender)}

    batch_zero = send(("e0", "e1"), 0)
    await s.produce("Produce sequence 0", batch_zero)
    await s.produce("Produce sequence 2", send(("e2",), 2))
    await s.produce("Produce batch 0 again", batch_zero)
    await s.produce("Produce sequence 5 after a gap", send(("e5",), 5))
    await s.produce("Produce sequence 3", send(("e3",), 3))
    await s.produce("Produce with the next epoch from sequence 0", send(("f0",), 0, epoch=producer.epoch + 1))
    await s.produce("Produce with the older epoch", send(("e4",), 4))
    await s.produce("Produce with the next epoch from sequence 3", send(("f3",), 3, epoch=producer.epoch + 2))
    await s.fetch("Fetch everything", {(events, 0): 0})


@scenario(DataApi.CREATE_TOPICS, DataApi.DELETE_TOPICS, DataApi.CREATE_PARTITIONS)
async def topic_admin(s: DataSession) -> None:
    await s.create_topics("CreateTopics with an unknown cleanup.policy", "bad-policy", 1,
                          configs={"cleanup.policy": "shred"})
    await s.create_topics("CreateTopics with an unknown config", "bad-name", 1, configs={"no.such.config": "1"})
    await s.create_topics("CreateTopics with a non-numeric retention.ms", "bad-retention", 1,
                          configs={"retention.ms": "soon"})
    await s.create_topics("CreateTopics with replication factor 2 on one broker", "two-copies", 1,
                          replication_factor=2)
    await s.create_topics("CreateTopics with zero partitions", "empty", 0)
    dry = await s.create_topics("CreateTopics validate_only", "dry-run", 3, validate_only=True)
    await s.describe_topic("Metadata after validate_only", dry)
    await s.create_topics("CreateTopics with replication factor -1 and partitions -1 (broker defaults)",
                          "defaults", -1, replication_factor=-1)
    orders = await s.topic("orders", 2)
    await s.create_topics("CreateTopics of an existing topic", "orders", 2)
    await s.create_partitions("CreatePartitions to fewer", orders, 1)
    await s.create_partitions("CreatePartitions to the same count", orders, 2)
    await s.create_partitions("CreatePartitions to more", orders, 3)
    await s.wait_for_partitions(orders, 3)
    await s.describe_topic("Metadata after growing", orders)
    await s.produce("Produce to the new partition", {(orders, 2): dq.batch(values("n"), timestamps=[s.at(0)])})
    await s.create_partitions("CreatePartitions of an unknown topic", s.name("topic", "ghost"), 3)
    await s.delete_topics("DeleteTopics of an unknown topic", s.name("topic", "phantom"))
    await s.delete_topics("DeleteTopics of orders", orders)
    await s.wait_until_gone(orders)
    await s.describe_topic("Metadata after the deletion", orders)


@scenario(DataApi.PRODUCE, DataApi.FETCH)
async def fetch_sessions(s: DataSession) -> None:
    """KIP-227: a full fetch opens a session; incremental fetches list only partitions with news."""
    logs = await s.topic("logs", 2)
    await s.produce("Produce to partition 0", {(logs, 0): dq.batch(values("l0"), timestamps=[s.at(0)])})
    both = {(logs, 0): 0, (logs, 1): 0}
    opened = await s.fetch("Full fetch at epoch 0", both, session_epoch=dq.FULL_FETCH_EPOCH)
    session = int(opened.session_id)
    await s.fetch_in_session("Incremental fetch at epoch 1 moving partition 0 past its record", {(logs, 0): 1},
                             session, 1)
    await s.fetch_in_session("Incremental fetch at epoch 2, nothing new", {}, session, 2)
    await s.produce("Produce to partition 1", {(logs, 1): dq.batch(values("l1"), timestamps=[s.at(1)])})
    await s.fetch_in_session("Incremental fetch at epoch 3 after the produce", {}, session, 3)
    await s.fetch_in_session("Incremental fetch at epoch 3 again", {}, session, 3)
    await s.fetch_in_session("Incremental fetch at epoch 4 moving partition 1 past its record", {(logs, 1): 1},
                             session, 4)
    await s.fetch_in_session("Incremental fetch with a future epoch", {}, session, 9)
    await s.fetch_in_session("Incremental fetch of an unknown session", {}, session + 1 if session else 1, 1)
    await s.fetch_in_session("Incremental fetch at epoch 5 forgetting partition 0", {}, session, 5,
                             forgotten={logs: (0,)})
    await s.produce("Produce to partition 0 again", {(logs, 0): dq.batch(values("l2"), timestamps=[s.at(2)])})
    await s.fetch_in_session("Incremental fetch at epoch 6 after producing to the forgotten partition", {},
                             session, 6)
    await s.fetch_in_session("Fetch at epoch -1 closes the session", both, session, dq.FINAL_EPOCH)
    await s.fetch_in_session("Incremental fetch of the closed session", {}, session, 7)
