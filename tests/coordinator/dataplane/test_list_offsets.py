"""ListOffsets as consumers resolve auto.offset.reset and offsetsForTimes."""
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch

from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData


async def append(dataplane, timestamps):
    records = [(b"k", b"v", ()) for _ in timestamps]
    await dataplane.produce.produce(acks=1, api_version=9, topics=[
        TopicData("orders", (PartitionData(0, encode_batch(records, timestamps=list(timestamps))),))])


async def lookup(dataplane, timestamp, topic="orders", partition=0):
    response = await dataplane.list_offsets.list_offsets([(topic, [(partition, timestamp)])])
    return response["topics"][0]["partitions"][0]


async def test_earliest_and_latest(dataplane):
    await dataplane.topics.create("orders", 1)
    assert (await lookup(dataplane, -2))["offset"] == 0
    assert (await lookup(dataplane, -1))["offset"] == 0
    await append(dataplane, [10, 20, 30])
    earliest, latest = await lookup(dataplane, -2), await lookup(dataplane, -1)
    assert (earliest["offset"], earliest["timestamp"]) == (0, -1)
    assert (latest["offset"], latest["timestamp"]) == (3, -1)
    assert latest["error_code"] is ErrorCode.none


async def test_by_timestamp_finds_the_first_record_at_or_after_it(dataplane):
    await dataplane.topics.create("orders", 1)
    await append(dataplane, [10, 20, 30])
    await append(dataplane, [40, 50])
    found = await lookup(dataplane, 25)
    assert (found["offset"], found["timestamp"]) == (2, 30)
    found = await lookup(dataplane, 41)
    assert (found["offset"], found["timestamp"]) == (4, 50)
    beyond = await lookup(dataplane, 99)
    assert (beyond["offset"], beyond["timestamp"]) == (-1, -1)


async def test_max_timestamp_points_at_the_record_carrying_it(dataplane):
    await dataplane.topics.create("orders", 1)
    await append(dataplane, [10, 90, 30])
    await append(dataplane, [40, 50])
    found = await lookup(dataplane, -3)
    assert (found["offset"], found["timestamp"]) == (1, 90)


async def test_max_timestamp_counts_only_records_still_in_the_log(dataplane):
    """Better than Kafka 4.3.1, on purpose: after DeleteRecords moved the log start past the record carrying the
    largest timestamp, Kafka still answers that record's offset from its segment's max-timestamp-so-far (seen
    with kafka-get-offsets --time -3 in tests/reference/kafka_tool_scenarios.py); a consumer cannot fetch it.
    groupcoord answers the largest timestamp among the records that remain, even inside a straddling batch."""
    await dataplane.topics.create("orders", 1)
    await append(dataplane, [10, 90, 60, 20])
    await append(dataplane, [40, 50])
    assert (await lookup(dataplane, -3))["offset"] == 1
    await dataplane.delete_records.delete("orders", 0, 2)     # offset 1 (timestamp 90) is gone; 60 at 2 remains
    found = await lookup(dataplane, -3)
    assert (found["offset"], found["timestamp"]) == (2, 60)
    await dataplane.delete_records.delete("orders", 0, 3)
    found = await lookup(dataplane, -3)
    assert (found["offset"], found["timestamp"]) == (5, 50)
    await dataplane.delete_records.delete("orders", 0, 6)
    assert (await lookup(dataplane, -3))["offset"] == -1


async def test_max_timestamp_of_an_empty_partition(dataplane):
    await dataplane.topics.create("orders", 1)
    assert (await lookup(dataplane, -3))["offset"] == -1


async def test_unknown_partitions_and_duplicates(dataplane):
    await dataplane.topics.create("orders", 1)
    assert (await lookup(dataplane, -1, partition=4))["error_code"] is ErrorCode.unknown_topic_or_partition
    assert (await lookup(dataplane, -1, topic="nope"))["error_code"] is ErrorCode.unknown_topic_or_partition
    response = await dataplane.list_offsets.list_offsets([("orders", [(0, -1), (0, -2)])])
    assert response["topics"][0]["partitions"][1]["error_code"] is ErrorCode.invalid_request
