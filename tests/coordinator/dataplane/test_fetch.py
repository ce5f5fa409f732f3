"""Fetch as consumers use it: limits, offsets out of range, topic ids and long polling."""
import asyncio
import uuid

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch, iter_batches

from groupcoord.coordinator.dataplane.fetch import FetchPartition, FetchRequestData, FetchTopic
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData


def batch(n=3, size=10):
    return encode_batch([(b"k", b"v" * size, ()) for _ in range(n)], base_timestamp=1_000)


async def append(dataplane, topic, partition, records):
    await dataplane.produce.produce(acks=1, api_version=9,
                                    topics=[TopicData(topic, (PartitionData(partition, records),))])


def request(*parts, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_id=0, session_epoch=-1, by_id=None,
            topic="orders"):
    partitions = tuple(FetchPartition(p, offset, limit) for p, offset, limit in parts)
    topics = (FetchTopic(None if by_id else topic, by_id, partitions),)
    return FetchRequestData(max_wait_ms, min_bytes, max_bytes, 0, session_id, topics, session_epoch,
                            uses_topic_ids=by_id is not None)


async def restarted_with_a_corrupt_partition_0(node):
    """Topic "orders" of 2 partitions, 3 records each; partition 0's only batch corrupted (a bit flipped in its last
    record) while the node is stopped cleanly, so the restart trusts the segment unread and the next fetch is its
    first read. Returns the restarted dataplane."""
    await node.dataplane.topics.create("orders", 2)
    for partition in (0, 1):
        await append(node.dataplane, "orders", partition, batch(3))
    directory = node.dataplane.topics.log("orders", 0).directory
    await node.stop()
    segment = sorted(directory.glob("*.log"))[0]
    data = bytearray(segment.read_bytes())
    data[-2] ^= 0x01
    segment.write_bytes(bytes(data))
    return await node.start()


def partitions_of(response):
    return {p["partition_index"]: p for t in response["responses"] for p in t["partitions"]}


async def test_fetch_returns_batches_and_watermarks(dataplane):
    await dataplane.topics.create("orders", 1)
    await append(dataplane, "orders", 0, batch(3))
    await append(dataplane, "orders", 0, batch(2))
    response = await dataplane.fetch.fetch(request((0, 0, 1 << 20)))
    assert response["session_id"] == 0 and response["error_code"] is ErrorCode.none
    part = partitions_of(response)[0]
    assert part["error_code"] is ErrorCode.none
    assert (part["high_watermark"], part["last_stable_offset"], part["log_start_offset"]) == (5, 5, 0)
    assert [h.base_offset for _, h in iter_batches(part["records"])] == [0, 3]


async def test_fetch_from_the_middle_of_the_log(dataplane):
    await dataplane.topics.create("orders", 1)
    for _ in range(3):
        await append(dataplane, "orders", 0, batch(2))
    part = partitions_of(await dataplane.fetch.fetch(request((0, 4, 1 << 20))))[0]
    assert [h.base_offset for _, h in iter_batches(part["records"])] == [4]


async def test_the_first_batch_is_returned_even_when_larger_than_the_limits(dataplane):
    await dataplane.topics.create("orders", 2)
    await append(dataplane, "orders", 0, batch(1, size=5000))
    await append(dataplane, "orders", 1, batch(1, size=5000))
    response = await dataplane.fetch.fetch(request((0, 0, 100), (1, 0, 100), max_bytes=100))
    parts = partitions_of(response)
    assert len(list(iter_batches(parts[0]["records"]))) == 1
    assert parts[1]["records"] == b""       # the response is already over max_bytes


async def test_partition_max_bytes_limits_each_partition(dataplane):
    await dataplane.topics.create("orders", 1)
    for _ in range(4):
        await append(dataplane, "orders", 0, batch(1, size=100))
    one_size = len(batch(1, size=100))
    part = partitions_of(await dataplane.fetch.fetch(request((0, 0, 2 * one_size + 10))))[0]
    assert len(list(iter_batches(part["records"]))) == 2


async def test_offsets_outside_the_log_are_out_of_range(dataplane):
    await dataplane.topics.create("orders", 1)
    await append(dataplane, "orders", 0, batch(3))
    part = partitions_of(await dataplane.fetch.fetch(request((0, 4, 1 << 20))))[0]
    assert part["error_code"] is ErrorCode.offset_out_of_range
    at_end = partitions_of(await dataplane.fetch.fetch(request((0, 3, 1 << 20))))[0]
    assert at_end["error_code"] is ErrorCode.none and at_end["records"] == b""


async def test_an_out_of_range_fetch_reports_unknown_offsets_as_kafka_does(dataplane):
    """Kafka answers OFFSET_OUT_OF_RANGE with high watermark, last stable offset and log start all -1 (its
    ReplicaManager's createLogReadResult for a failed read), so a consumer resets from ListOffsets alone."""
    await dataplane.topics.create("orders", 1)
    await append(dataplane, "orders", 0, batch(3))
    for offset in (4, -1):
        part = partitions_of(await dataplane.fetch.fetch(request((0, offset, 1 << 20))))[0]
        assert part["error_code"] is ErrorCode.offset_out_of_range
        assert (part["high_watermark"], part["last_stable_offset"], part["log_start_offset"]) == (-1, -1, -1)
        assert part["records"] == b""


async def test_unknown_topics_partitions_and_ids(dataplane):
    await dataplane.topics.create("orders", 1)
    assert partitions_of(await dataplane.fetch.fetch(request((3, 0, 100))))[3]["error_code"] is \
        ErrorCode.unknown_topic_or_partition
    assert partitions_of(await dataplane.fetch.fetch(request((0, 0, 100), topic="nope")))[0]["error_code"] is \
        ErrorCode.unknown_topic_or_partition
    assert partitions_of(await dataplane.fetch.fetch(request((0, 0, 100), by_id=uuid.uuid4())))[0]["error_code"] \
        is ErrorCode.unknown_topic_id


async def test_fetch_by_topic_id(dataplane):
    topic = (await dataplane.topics.create("orders", 1)).topic
    await append(dataplane, "orders", 0, batch(3))
    response = await dataplane.fetch.fetch(request((0, 0, 1 << 20), by_id=topic.topic_id))
    assert response["responses"][0]["topic_id"] == topic.topic_id
    assert partitions_of(response)[0]["high_watermark"] == 3


async def test_an_unknown_fetch_session_is_refused(dataplane):
    response = await dataplane.fetch.fetch(request((0, 0, 100), session_id=77, session_epoch=3))
    assert response["error_code"] is ErrorCode.fetch_session_id_not_found
    assert response["session_id"] == 0 and response["responses"] == []


async def test_the_offsets_topic_is_readable(node):
    log = await node.log_manager.get_or_create("__consumer_offsets", 0)
    await log.append(batch(2))
    part = partitions_of(await node.dataplane.fetch.fetch(request((0, 0, 1 << 20), topic="__consumer_offsets")))[0]
    assert part["high_watermark"] == 2 and part["records"]


# ---- long polling -------------------------------------------------------------------------------

async def settle():
    for _ in range(5):
        await asyncio.sleep(0)


async def test_an_idle_fetch_waits_for_max_wait_ms(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    pending = asyncio.ensure_future(dataplane.fetch.fetch(request((0, 0, 1 << 20), max_wait_ms=500)))
    await settle()
    assert not pending.done() and dataplane.purgatory.parked == 1
    node.clock.advance(499)
    await settle()
    assert not pending.done()
    node.clock.advance(1)
    part = partitions_of(await pending)[0]
    assert part["records"] == b"" and part["error_code"] is ErrorCode.none
    assert dataplane.purgatory.parked == 0


async def test_an_append_completes_a_parked_fetch_before_its_deadline(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    pending = asyncio.ensure_future(dataplane.fetch.fetch(request((0, 0, 1 << 20), max_wait_ms=30_000)))
    await settle()
    assert not pending.done()
    await append(dataplane, "orders", 0, batch(2))
    part = partitions_of(await asyncio.wait_for(pending, 5))[0]
    assert part["high_watermark"] == 2 and part["records"]


async def test_min_bytes_keeps_the_fetch_parked_until_enough_arrived(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    small = len(batch(1, size=10))
    pending = asyncio.ensure_future(
        dataplane.fetch.fetch(request((0, 0, 1 << 20), max_wait_ms=30_000, min_bytes=2 * small + 1)))
    await settle()
    await append(dataplane, "orders", 0, batch(1, size=10))
    await settle()
    await append(dataplane, "orders", 0, batch(1, size=10))
    await settle()
    assert not pending.done()
    await append(dataplane, "orders", 0, batch(1, size=10))
    part = partitions_of(await asyncio.wait_for(pending, 5))[0]
    assert len(list(iter_batches(part["records"]))) == 3


async def test_stopping_the_data_plane_answers_parked_fetches(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    pending = asyncio.ensure_future(dataplane.fetch.fetch(request((0, 0, 1 << 20), max_wait_ms=30_000)))
    await settle()
    await dataplane.stop()
    assert partitions_of(await asyncio.wait_for(pending, 5))[0]["error_code"] is ErrorCode.none


async def test_a_parked_fetch_is_woken_on_a_topic_recreated_after_deletion(node):
    """The append listener was once keyed by ``id(log)``: a recreated partition whose log reused a freed
    address got no listener, and a parked fetch on it waited out its whole max_wait. Many cycles, so the
    allocator gets its chance to recycle the address; every cycle's fetch must be woken by its append."""
    dataplane = node.dataplane
    addresses: set[int] = set()
    recycled = 0
    for cycle in range(40):
        await dataplane.topics.create("orders", 1)
        log = dataplane.topics.log("orders", 0)
        recycled += id(log) in addresses
        addresses.add(id(log))
        del log
        pending = asyncio.ensure_future(dataplane.fetch.fetch(request((0, 0, 1 << 20), max_wait_ms=30_000)))
        await settle()
        assert not pending.done()
        await append(dataplane, "orders", 0, batch(1))
        done, _ = await asyncio.wait({pending}, timeout=2)
        assert done, f"cycle {cycle}: the append did not wake the parked fetch ({recycled} addresses recycled)"
        assert partitions_of(pending.result())[0]["high_watermark"] == 1
        waiting = asyncio.ensure_future(dataplane.fetch.fetch(request((0, 1, 1 << 20), max_wait_ms=30_000)))
        await settle()
        assert not waiting.done()
        assert (await dataplane.topics.delete("orders")).error is ErrorCode.none
        await asyncio.wait_for(waiting, 2)  # deleting the topic answers the fetch parked on it


async def test_a_corrupt_batch_met_by_a_fetch_answers_kafka_storage_error_for_its_partition_only(node):
    """The first read that finds a CRC mismatch must not fail the whole response: that partition answers
    KAFKA_STORAGE_ERROR with unknown offsets (as Kafka's failed reads do), the other partition is served."""
    dataplane = await restarted_with_a_corrupt_partition_0(node)

    response = await dataplane.fetch.fetch(request((0, 0, 1 << 20), (1, 0, 1 << 20)))
    parts = partitions_of(response)
    assert parts[0]["error_code"] is ErrorCode.kafka_storage_error
    assert (parts[0]["high_watermark"], parts[0]["log_start_offset"]) == (-1, -1)
    assert parts[1]["error_code"] is ErrorCode.none and parts[1]["records"]
