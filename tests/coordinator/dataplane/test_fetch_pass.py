"""One pass of a fetch over its partitions: what it notes as it goes (each log's end, a topic id found to match)
decides whether it parks and how each partition is answered, as a look over the logs before the pass did."""
import asyncio
import threading
import uuid

import pytest

from groupcoord.coordinator.dataplane import fetch as fetch_module
from groupcoord.coordinator.dataplane.fetch import FetchPartition, FetchRequestData, FetchTopic
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import iter_batches

from .test_fetch import append, batch, partitions_of


def fetch_of(*partitions, topic="orders", topic_id=None, isolation_level=0, min_bytes=1, max_wait_ms=0,
             session_id=0, epoch=-1):
    topics = (FetchTopic(None if topic_id else topic, topic_id,
                         tuple(FetchPartition(p, offset, 1 << 20) for p, offset in partitions)),) if partitions else ()
    return FetchRequestData(max_wait_ms, min_bytes, 1 << 20, isolation_level, session_id, topics, epoch,
                            uses_topic_ids=topic_id is not None)


@pytest.mark.parametrize("isolation_level", [0, 1], ids=["read_uncommitted", "read_committed"])
async def test_an_append_landing_while_the_reads_run_is_read_before_the_fetch_parks(node, monkeypatch,
                                                                                   isolation_level):
    """The append's wake-up finds no parked fetch (it is still reading): the fetch itself must notice the log
    moved past what its pass saw and read again, or it would sleep out its max wait with the data there."""
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 2)
    await append(dataplane, "orders", 0, batch(2))
    entered, gate, real = threading.Event(), threading.Event(), fetch_module._run_reads

    def held_once(planned, budget):
        if not entered.is_set():
            entered.set()
            gate.wait(10)
        return real(planned, budget)

    monkeypatch.setattr(fetch_module, "_run_reads", held_once)
    monkeypatch.setattr(fetch_module, "_reads_on_loop", lambda planned: False)  # on a thread, as a catching-up read
    one = len(batch(2))
    pending = asyncio.ensure_future(dataplane.fetch.fetch(
        fetch_of((0, 0), (1, 0), isolation_level=isolation_level, min_bytes=2 * one, max_wait_ms=30_000)))
    for _ in range(5000):
        if entered.is_set():
            break
        await asyncio.sleep(0.001)
    await append(dataplane, "orders", 1, batch(2))
    gate.set()
    parts = partitions_of(await asyncio.wait_for(pending, 5))
    assert [len(list(iter_batches(parts[p]["records"]))) for p in (0, 1)] == [1, 1]
    assert (parts[1]["high_watermark"], parts[1]["last_stable_offset"]) == (2, 2)


async def test_every_partition_of_a_recreated_topic_is_inconsistent_and_the_other_topics_are_read(dataplane):
    """The id check is made once per topic and pass: all the recreated topic's partitions fail it, another
    topic's partitions of the same session are read as before."""
    orders = (await dataplane.topics.create("orders", 3)).topic
    audit = (await dataplane.topics.create("audit", 2)).topic
    full = FetchRequestData(0, 1, 1 << 20, 0, 0, (
        FetchTopic(None, orders.topic_id, tuple(FetchPartition(p, 0, 1 << 20) for p in range(3))),
        FetchTopic(None, audit.topic_id, tuple(FetchPartition(p, 0, 1 << 20) for p in range(2)))), 0,
        uses_topic_ids=True)
    session_id = (await dataplane.fetch.fetch(full))["session_id"]
    await dataplane.topics.delete("orders")
    await dataplane.topics.create("orders", 3)
    await append(dataplane, "audit", 1, batch(2))
    answer = await dataplane.fetch.fetch(FetchRequestData(0, 1, 1 << 20, 0, session_id, (), 1, uses_topic_ids=True))
    by_topic = {t["topic_id"]: {p["partition_index"]: p for p in t["partitions"]} for t in answer["responses"]}
    assert {p: e["error_code"] for p, e in by_topic[orders.topic_id].items()} == \
        {p: ErrorCode.inconsistent_topic_id for p in range(3)}
    assert by_topic[audit.topic_id][1]["error_code"] is ErrorCode.none
    assert len(list(iter_batches(by_topic[audit.topic_id][1]["records"]))) == 1
    assert isinstance(orders.topic_id, uuid.UUID)
