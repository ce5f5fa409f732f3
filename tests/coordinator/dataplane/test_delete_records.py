"""DeleteRecords as kafka-delete-records.sh and AdminClient.deleteRecords use it: the log start offset moves,
earlier records are gone for readers, whole segments below it are removed, and a restart keeps it."""
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch

from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData


async def append(dataplane, count, topic="orders"):
    for i in range(count):
        await dataplane.produce.produce(acks=1, api_version=9, topics=[
            TopicData(topic, (PartitionData(0, encode_batch([(b"k", b"v%d" % i, ())])),))])


async def earliest(dataplane, topic="orders"):
    response = await dataplane.list_offsets.list_offsets([(topic, [(0, -2)])])
    return response["topics"][0]["partitions"][0]["offset"]


async def test_the_start_moves_and_survives_a_restart(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1, configs={"segment.bytes": "200"})
    await append(dataplane, 10)
    log = dataplane.topics.log("orders", 0)
    segments_before = len(log.segments)
    result = await dataplane.delete_records.delete("orders", 0, 6)
    assert (result.error, result.low_watermark) == (ErrorCode.none, 6)
    assert await earliest(dataplane) == 6
    assert len(log.segments) < segments_before  # whole segments below the start are deleted
    assert (await dataplane.delete_records.delete("orders", 0, 3)).low_watermark == 6  # never moves back

    dataplane = await node.crash_restart()
    assert await earliest(dataplane) == 6
    dataplane = await node.restart()
    assert await earliest(dataplane) == 6


async def test_minus_one_means_the_high_watermark(dataplane):
    await dataplane.topics.create("orders", 1)
    await append(dataplane, 4)
    assert (await dataplane.delete_records.delete("orders", 0, -1)).low_watermark == 4
    assert await earliest(dataplane) == 4


async def test_refusals_as_kafka_answers_them(dataplane):
    await dataplane.topics.create("orders", 1)
    await dataplane.topics.create("compacted", 1, configs={"cleanup.policy": "compact"})
    await append(dataplane, 3)
    past = await dataplane.delete_records.delete("orders", 0, 4)
    assert (past.error, past.low_watermark) == (ErrorCode.offset_out_of_range, -1)
    assert (await dataplane.delete_records.delete("orders", 0, -5)).error is ErrorCode.offset_out_of_range
    assert (await dataplane.delete_records.delete("orders", 1, 0)).error is ErrorCode.unknown_topic_or_partition
    assert (await dataplane.delete_records.delete("nope", 0, 0)).error is ErrorCode.unknown_topic_or_partition
    assert (await dataplane.delete_records.delete("compacted", 0, 0)).error is ErrorCode.policy_violation
    assert (await dataplane.delete_records.delete("__consumer_offsets", 0, 0)).error is ErrorCode.invalid_topic_exception
