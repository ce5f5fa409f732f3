"""Incremental fetch sessions (KIP-227): a consumer opens a session with one full fetch, then sends only what
changed and hears only about partitions that changed, as from Kafka.

The first half drives the sans-I/O cache and contexts with a manual clock; the second half fetches from a
real data plane, where the logs decide what changed."""
import asyncio
import random
import uuid

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch, iter_batches

from groupcoord.coordinator.clock import ManualClock
from groupcoord.coordinator.dataplane.fetch import FetchPartition, FetchRequestData, FetchTopic, ForgottenTopic
from groupcoord.coordinator.dataplane.fetch_sessions import (
    FetchManager, FetchSessionCache, FullFetchContext, IncrementalFetchContext, PartitionRequest,
    SessionErrorContext, SessionlessFetchContext, TopicPartitionRef, next_epoch)
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData

EVICTION_MS = 120_000


def ref(partition, topic="orders", topic_id=None):
    return TopicPartitionRef(topic, topic_id, partition)


def wanted(*partitions, offset=0, max_bytes=1 << 20):
    return [(ref(p), PartitionRequest(offset, max_bytes)) for p in partitions]


def entry(partition, high_watermark=10, log_start_offset=0, records=b"", error=ErrorCode.none):
    return (ref(partition), {"partition_index": partition, "error_code": error, "high_watermark": high_watermark,
                             "last_stable_offset": high_watermark, "log_start_offset": log_start_offset,
                             "preferred_read_replica": -1, "records": records, "aborted_transactions": None})


def no_names(_topic_id):
    return None


class Sessions:
    """A cache and manager on a manual clock, and a consumer's view: full fetch, then incremental ones."""

    def __init__(self, slots=10, eviction_ms=EVICTION_MS):
        self.clock = ManualClock()
        self.cache = FetchSessionCache(slots, eviction_ms, self.clock, random.Random(7))
        self.manager = FetchManager(self.cache)

    def context(self, session_id, epoch, fetch_data=(), forget=(), uses_topic_ids=False, names=no_names):
        return self.manager.new_context(session_id, epoch, uses_topic_ids, list(fetch_data), list(forget), names)

    def open(self, *partitions, uses_topic_ids=False):
        """A full fetch (epoch 0) of the partitions, every one answered with high watermark 10."""
        context = self.context(0, 0, wanted(*partitions), uses_topic_ids=uses_topic_ids)
        assert isinstance(context, FullFetchContext)
        return context.respond([entry(p) for p in partitions]).session_id

    def order(self, session_id):
        return [cached.ref.partition for cached in self.cache.get(session_id).partitions.values()]


# ---- the cache and the contexts --------------------------------------------------------------------

def test_a_full_fetch_opens_a_session_with_the_requested_partitions():
    s = Sessions()
    session_id = s.open(0, 1, 2)
    assert 0 < session_id < 2**31
    session = s.cache.get(session_id)
    assert session.epoch == 1 and s.order(session_id) == [0, 1, 2]
    assert len(s.cache) == 1 and s.cache.created == 1 and s.cache.total_partitions == 3


def test_a_sessionless_fetch_opens_nothing():
    s = Sessions()
    context = s.context(0, -1, wanted(0))
    assert isinstance(context, SessionlessFetchContext)
    answer = context.respond([entry(0)])
    assert answer.session_id == 0 and len(answer.partitions) == 1 and len(s.cache) == 0


def test_an_incremental_fetch_reads_every_partition_and_answers_only_the_changed_ones():
    s = Sessions()
    session_id = s.open(0, 1, 2)
    context = s.context(session_id, 1)
    assert [r.partition for r, _ in context.partitions()] == [0, 1, 2]
    answer = context.respond([entry(0), entry(1, high_watermark=12, records=b"xx"), entry(2, log_start_offset=4)])
    assert answer.error is ErrorCode.none and answer.session_id == session_id
    assert [r.partition for r, _ in answer.partitions] == [1, 2]
    unchanged = s.context(session_id, 2).respond([entry(0), entry(1, high_watermark=12), entry(2, log_start_offset=4)])
    assert unchanged.partitions == []


def test_an_incremental_fetch_updates_offsets_and_adds_partitions():
    s = Sessions()
    session_id = s.open(0, 1)
    context = s.context(session_id, 1, wanted(1, 3, offset=7))
    assert [(r.partition, req.fetch_offset) for r, req in context.partitions()] == [(0, 0), (1, 7), (3, 7)]


def test_an_error_is_always_answered_and_the_partition_is_resent_once_it_clears():
    s = Sessions()
    session_id = s.open(0)
    failed = s.context(session_id, 1).respond([entry(0, error=ErrorCode.offset_out_of_range)])
    assert len(failed.partitions) == 1
    recovered = s.context(session_id, 2).respond([entry(0)])
    assert len(recovered.partitions) == 1       # same watermark as before the error, yet answered


def test_forgotten_partitions_leave_the_session():
    s = Sessions()
    session_id = s.open(0, 1, 2)
    context = s.context(session_id, 1, forget=[ref(1)])
    assert [r.partition for r, _ in context.partitions()] == [0, 2]
    assert s.cache.total_partitions == 2


def test_forgetting_every_partition_ends_the_session():
    s = Sessions()
    session_id = s.open(0)
    context = s.context(session_id, 1, forget=[ref(0)])
    assert isinstance(context, SessionlessFetchContext)
    assert s.cache.get(session_id) is None


def test_a_wrong_epoch_is_refused_without_changing_the_session():
    s = Sessions()
    session_id = s.open(0)
    context = s.context(session_id, 2, wanted(5))
    assert isinstance(context, SessionErrorContext)
    answer = context.respond([])
    assert (answer.error, answer.session_id, answer.partitions) == (ErrorCode.invalid_fetch_session_epoch, 0, [])
    assert s.order(session_id) == [0] and s.cache.get(session_id).epoch == 1


def test_an_unknown_session_is_not_found():
    s = Sessions()
    answer = s.context(12345, 1).respond([])
    assert (answer.error, answer.session_id) == (ErrorCode.fetch_session_id_not_found, 0)


def test_a_request_overtaken_on_its_session_answers_invalid_epoch_with_the_session_id():
    s = Sessions()
    session_id = s.open(0)
    slow = s.context(session_id, 1)
    s.context(session_id, 2).respond([entry(0)])
    answer = slow.respond([entry(0, records=b"x")])
    assert (answer.error, answer.session_id, answer.partitions) == (ErrorCode.invalid_fetch_session_epoch,
                                                                    session_id, [])


def test_epoch_minus_one_closes_the_session_and_answers_without_one():
    s = Sessions()
    session_id = s.open(0)
    context = s.context(session_id, -1, wanted(0))
    assert isinstance(context, SessionlessFetchContext)
    assert s.cache.get(session_id) is None
    assert s.context(session_id, 1).respond([]).error is ErrorCode.fetch_session_id_not_found


def test_epoch_zero_naming_a_session_replaces_it():
    s = Sessions()
    old = s.open(0)
    context = s.context(old, 0, wanted(1))
    new = context.respond([entry(1)]).session_id
    assert s.cache.get(old) is None and new not in (0, old) and s.order(new) == [1]


def test_a_session_keeps_to_topic_ids_or_names_as_it_was_created():
    s = Sessions()
    by_name = s.open(0)
    assert s.context(by_name, 1, uses_topic_ids=True).respond([]).error is ErrorCode.fetch_session_topic_id_error
    by_id = s.open(0, uses_topic_ids=True)
    assert s.context(by_id, 1).respond([]).error is ErrorCode.fetch_session_topic_id_error


def test_a_partition_added_under_an_unknown_topic_id_is_named_once_the_topic_exists():
    s = Sessions()
    topic_id = uuid.uuid4()
    context = s.context(0, 0, [(ref(0, None, topic_id), PartitionRequest(0, 100))], uses_topic_ids=True)
    session_id = context.respond([(ref(0, None, topic_id), entry(0, error=ErrorCode.unknown_topic_id)[1])]).session_id
    later = s.context(session_id, 1, uses_topic_ids=True, names={topic_id: "orders"}.get)
    assert [r.topic for r, _ in later.partitions()] == ["orders"]


def test_partitions_answered_with_records_rotate_to_the_end():
    s = Sessions()
    session_id = s.open(0, 1, 2)
    s.context(session_id, 1).respond([entry(0, records=b"x"), entry(1), entry(2)])
    assert s.order(session_id) == [1, 2, 0]
    s.context(session_id, 2).respond([entry(1, high_watermark=11), entry(2), entry(0)])
    assert s.order(session_id) == [1, 2, 0]         # answered for its watermark, but no records: stays


def test_a_full_cache_opens_no_session_for_a_recent_one():
    s = Sessions(slots=2)
    first, second = s.open(0), s.open(0)
    s.clock.advance(EVICTION_MS)
    assert s.open(0) == 0
    assert {first, second} == {sid for sid in (first, second) if s.cache.get(sid)}


def test_a_stale_session_is_evicted_for_a_new_one():
    s = Sessions(slots=2)
    first = s.open(0)
    s.clock.advance(10)
    second = s.open(0)
    s.clock.advance(EVICTION_MS + 1 - 10)           # first unused for longer than the eviction time
    third = s.open(0)
    assert third != 0 and s.cache.get(first) is None and s.cache.get(second) is not None
    assert s.cache.evictions == 1


def test_an_old_but_busy_session_gives_way_only_to_a_larger_one():
    s = Sessions(slots=1)
    small = s.open(0, 1)
    s.clock.advance(EVICTION_MS + 1)
    s.context(small, 1).respond([entry(0), entry(1)])    # used just now, and older than the eviction time
    assert s.open(0, 1) == 0                             # same size: not worth more
    larger = s.open(0, 1, 2)
    assert larger != 0 and s.cache.get(small) is None and s.order(larger) == [0, 1, 2]


def test_a_young_session_is_never_evicted_for_a_larger_one():
    s = Sessions(slots=1)
    small = s.open(0)
    s.clock.advance(EVICTION_MS)                         # not yet older than the eviction time
    s.context(small, 1).respond([entry(0)])
    assert s.open(0, 1, 2, 3) == 0 and s.cache.get(small) is not None


def test_session_ids_are_positive_unique_and_never_zero():
    class Repeating(random.Random):
        def __init__(self):
            super().__init__()
            self.values = iter([42, 42, 43])

        def randint(self, a, b):
            assert a == 1 and b == 2**31 - 2
            return next(self.values)

    cache = FetchSessionCache(10, EVICTION_MS, ManualClock(), Repeating())
    assert [cache.maybe_create_session(False, False, []) for _ in range(2)] == [42, 43]


def test_epochs_wrap_to_one_and_final_stays_final():
    assert next_epoch(1) == 2 and next_epoch(2**31 - 1) == 1 and next_epoch(-1) == -1


# ---- through the data plane --------------------------------------------------------------------------

def batch(n=1, size=10):
    return encode_batch([(b"k", b"v" * size, ()) for _ in range(n)], base_timestamp=1_000)


async def append(dataplane, topic, partition, records):
    await dataplane.produce.produce(acks=1, api_version=9,
                                    topics=[TopicData(topic, (PartitionData(partition, records),))])


def fetch(*parts, session_id=0, epoch=0, forgotten=(), topic="orders", topic_id=None, max_wait_ms=0,
          max_bytes=1 << 20):
    """A consumer's Fetch: parts are (partition, offset[, partition_max_bytes])."""
    partitions = tuple(FetchPartition(p[0], p[1], p[2] if len(p) > 2 else 1 << 20) for p in parts)
    topics = (FetchTopic(None if topic_id else topic, topic_id, partitions),) if partitions else ()
    forgotten_topics = ((ForgottenTopic(None if topic_id else topic, topic_id, tuple(forgotten)),)
                        if forgotten else ())
    return FetchRequestData(max_wait_ms, 1, max_bytes, 0, session_id, topics, epoch, forgotten_topics,
                            uses_topic_ids=topic_id is not None)


def answered(response):
    return {p["partition_index"]: p for t in response["responses"] for p in t["partitions"]}


async def test_a_consumer_session_hears_only_about_partitions_with_news(dataplane):
    await dataplane.topics.create("orders", 3)
    full = await dataplane.fetch.fetch(fetch((0, 0), (1, 0), (2, 0)))
    session_id = full["session_id"]
    assert session_id != 0 and sorted(answered(full)) == [0, 1, 2]
    await append(dataplane, "orders", 1, batch(3))
    news = await dataplane.fetch.fetch(fetch(session_id=session_id, epoch=1))
    assert news["session_id"] == session_id and sorted(answered(news)) == [1]
    assert [h.base_offset for _, h in iter_batches(answered(news)[1]["records"])] == [0]
    quiet = await dataplane.fetch.fetch(fetch((1, 3), session_id=session_id, epoch=2))
    assert quiet["error_code"] is ErrorCode.none and quiet["responses"] == []


async def test_a_forgotten_partition_is_no_longer_read(dataplane):
    await dataplane.topics.create("orders", 2)
    session_id = (await dataplane.fetch.fetch(fetch((0, 0), (1, 0))))["session_id"]
    await dataplane.fetch.fetch(fetch(session_id=session_id, epoch=1, forgotten=[1]))
    await append(dataplane, "orders", 1, batch())
    await append(dataplane, "orders", 0, batch())
    response = await dataplane.fetch.fetch(fetch(session_id=session_id, epoch=2))
    assert sorted(answered(response)) == [0]


async def test_a_long_poll_on_a_session_wakes_for_any_of_its_partitions(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 3)
    session_id = (await dataplane.fetch.fetch(fetch((0, 0), (1, 0), (2, 0))))["session_id"]
    pending = asyncio.ensure_future(dataplane.fetch.fetch(fetch(session_id=session_id, epoch=1, max_wait_ms=30_000)))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not pending.done() and dataplane.purgatory.parked == 1
    await append(dataplane, "orders", 2, batch())
    response = await asyncio.wait_for(pending, 5)
    assert sorted(answered(response)) == [2] and answered(response)[2]["records"]


async def test_partitions_take_turns_when_the_response_has_room_for_one(dataplane):
    await dataplane.topics.create("orders", 3)
    for partition in range(3):
        for _ in range(3):
            await append(dataplane, "orders", partition, batch(size=200))
    one = len(batch(size=200))
    full = await dataplane.fetch.fetch(fetch((0, 0, one), (1, 0, one), (2, 0, one), max_bytes=one))
    assert [p for p, e in answered(full).items() if e["records"]] == [0]
    session_id, offsets, served = full["session_id"], {0: 1, 1: 0, 2: 0}, []
    for epoch in range(1, 6):
        response = await dataplane.fetch.fetch(
            fetch(*[(p, offsets[p], one) for p in range(3)], session_id=session_id, epoch=epoch, max_bytes=one))
        with_records = [p for p, e in answered(response).items() if e["records"]]
        served.extend(with_records)
        for p in with_records:
            offsets[p] += 1
    # The full fetch opens the session in request order (Kafka rotates only on incremental answers), so
    # partition 0 is served again first; from then on each served partition goes to the back of the line.
    assert served == [0, 1, 2, 0, 1]


async def test_a_topic_deleted_under_a_session_is_answered_as_unknown(dataplane):
    topic = (await dataplane.topics.create("orders", 1)).topic
    full = await dataplane.fetch.fetch(fetch((0, 0), topic_id=topic.topic_id))
    session_id = full["session_id"]
    await dataplane.topics.delete("orders")
    gone = await dataplane.fetch.fetch(fetch(session_id=session_id, epoch=1, topic_id=topic.topic_id))
    assert answered(gone)[0]["error_code"] is ErrorCode.unknown_topic_or_partition
    await dataplane.topics.create("orders", 1)
    recreated = await dataplane.fetch.fetch(fetch(session_id=session_id, epoch=2, topic_id=topic.topic_id))
    assert answered(recreated)[0]["error_code"] is ErrorCode.inconsistent_topic_id
    assert recreated["responses"][0]["topic_id"] == topic.topic_id


async def test_a_name_session_fetched_with_topic_ids_is_refused(dataplane):
    topic = (await dataplane.topics.create("orders", 1)).topic
    session_id = (await dataplane.fetch.fetch(fetch((0, 0))))["session_id"]
    response = await dataplane.fetch.fetch(fetch(session_id=session_id, epoch=1, topic_id=topic.topic_id))
    assert response["error_code"] is ErrorCode.fetch_session_topic_id_error and response["session_id"] == 0


async def test_the_cache_size_comes_from_the_broker_config(tmp_path):
    from tests.coordinator.dataplane.conftest import Node
    node = Node(tmp_path / "data", max_incremental_fetch_session_cache_slots=1)
    dataplane = await node.start()
    try:
        await dataplane.topics.create("orders", 1)
        assert (await dataplane.fetch.fetch(fetch((0, 0))))["session_id"] != 0
        assert (await dataplane.fetch.fetch(fetch((0, 0))))["session_id"] == 0
    finally:
        await node.stop()
