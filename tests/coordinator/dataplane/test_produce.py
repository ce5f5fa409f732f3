"""Produce as stock producers drive it: validation errors per partition, idempotent retries, restarts."""
import struct

import pytest

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import decode_records, encode_batch, iter_batches, parse_header

from tests.coordinator.dataplane.conftest import TEST_START_MS
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData

PID = 4242
SENT_AT = TEST_START_MS   # the test clock's start: batches sent "now", so no producer is idle


def batch(n=3, *, compression=0, pid=-1, epoch=-1, seq=-1, key=b"k", size=10, ts=SENT_AT):
    return encode_batch([(key, b"v" * size, ()) for _ in range(n)], compression=compression, producer_id=pid,
                        producer_epoch=epoch, base_sequence=seq, base_timestamp=ts)


async def produce(dataplane, topic, partition, records, *, acks=-1, version=9):
    response = await dataplane.produce.produce(
        acks=acks, api_version=version, topics=[TopicData(topic, (PartitionData(partition, records),))])
    [topic_response] = response["responses"]
    [part] = topic_response["partition_responses"]
    return part


async def read_all(dataplane, topic, partition=0):
    data = await dataplane.topics.log(topic, partition).read(0, 1 << 30)
    return [r for pos, h in iter_batches(data) for r in decode_records(data, pos, h)]


async def test_batches_get_consecutive_offsets(dataplane):
    await dataplane.topics.create("orders", 1)
    first = await produce(dataplane, "orders", 0, batch(3))
    second = await produce(dataplane, "orders", 0, batch(2, compression=1))
    assert (first["error_code"], first["base_offset"]) == (ErrorCode.none, 0)
    assert (second["error_code"], second["base_offset"]) == (ErrorCode.none, 3)
    assert first["log_append_time"] == -1
    assert [r.offset for r in await read_all(dataplane, "orders")] == [0, 1, 2, 3, 4]


async def test_compressed_batches_are_stored_as_they_came(dataplane):
    await dataplane.topics.create("orders", 1)
    sent = batch(5, compression=4, size=200)
    await produce(dataplane, "orders", 0, sent)
    stored = await dataplane.topics.log("orders", 0).read(0, 1 << 20)
    # all but what the broker stamps outside the CRC: the base offset and its leader epoch (0)
    assert stored[16:] == sent[16:]
    assert stored[12:16] == (0).to_bytes(4, "big") and sent[12:16] == (-1).to_bytes(4, "big", signed=True)


async def test_producing_to_an_unknown_topic_auto_creates_it(dataplane):
    part = await produce(dataplane, "fresh", 0, batch())
    assert part["error_code"] is ErrorCode.none
    assert dataplane.topics.partition_count("fresh") == 1


async def test_unknown_partition_and_internal_topic_are_refused(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    assert (await produce(dataplane, "orders", 5, batch()))["error_code"] is ErrorCode.unknown_topic_or_partition
    await node.log_manager.get_or_create("__consumer_offsets", 0)
    assert (await produce(dataplane, "__consumer_offsets", 0, batch()))["error_code"] is \
        ErrorCode.invalid_topic_exception


async def test_unknown_topic_without_auto_create(tmp_path):
    from tests.coordinator.dataplane.conftest import Node
    node = Node(tmp_path, auto_create_topics_enable=False)
    dataplane = await node.start()
    try:
        assert (await produce(dataplane, "fresh", 0, batch()))["error_code"] is \
            ErrorCode.unknown_topic_or_partition
    finally:
        await node.stop()


def corrupt_crc(data):
    out = bytearray(data)
    out[-1] ^= 0xFF
    return bytes(out)


def old_magic(data):
    out = bytearray(data)
    out[16] = 1
    return bytes(out)


def count_mismatch(data):
    out = bytearray(data)
    struct.pack_into(">i", out, 57, 7)          # records_count no longer matches last_offset_delta + 1
    return bytes(out)


@pytest.mark.parametrize("records, error", [
    (None, ErrorCode.invalid_record),
    (b"", ErrorCode.invalid_record),
    (corrupt_crc(batch()), ErrorCode.corrupt_message),
    (old_magic(batch()), ErrorCode.invalid_record),
    (batch()[:40], ErrorCode.corrupt_message),
    (batch() + batch(), ErrorCode.invalid_record),
    (batch(pid=PID, epoch=0, seq=-1), ErrorCode.invalid_record),
    (encode_batch([(b"k", b"v", ())], is_control=True), ErrorCode.invalid_record),
    (encode_batch([(b"k", b"v", ())], producer_id=PID, producer_epoch=0, base_sequence=0, is_transactional=True),
     ErrorCode.transactional_id_authorization_failed),
], ids=["null", "empty", "crc", "magic1", "truncated", "two-batches", "pid-without-seq", "control",
        "transactional-without-transactional-id"])
async def test_invalid_batches_are_refused(dataplane, records, error):
    await dataplane.topics.create("orders", 1)
    part = await produce(dataplane, "orders", 0, records)
    assert part["error_code"] is error
    assert part["base_offset"] == -1
    assert dataplane.topics.log("orders", 0).log_end_offset == 0


async def test_inconsistent_record_count_is_invalid(dataplane):
    await dataplane.topics.create("orders", 1)
    data = bytearray(count_mismatch(batch(3)))
    from groupcoord.protocol.crc import crc32c
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    assert (await produce(dataplane, "orders", 0, bytes(data)))["error_code"] is ErrorCode.invalid_record


async def test_zstd_needs_produce_v7(dataplane):
    await dataplane.topics.create("orders", 1)
    assert (await produce(dataplane, "orders", 0, batch(compression=4), version=6))["error_code"] is \
        ErrorCode.unsupported_compression_type
    assert (await produce(dataplane, "orders", 0, batch(compression=4), version=7))["error_code"] is ErrorCode.none


async def test_batches_above_max_message_bytes_are_too_large(dataplane):
    await dataplane.topics.create("small", 1, 1, {"max.message.bytes": "200"})
    assert (await produce(dataplane, "small", 0, batch(1, size=500)))["error_code"] is ErrorCode.message_too_large
    assert (await produce(dataplane, "small", 0, batch(1, size=10)))["error_code"] is ErrorCode.none


async def test_compacted_topics_need_keys(dataplane):
    await dataplane.topics.create("table", 1, 1, {"cleanup.policy": "compact"})
    assert (await produce(dataplane, "table", 0, batch(key=None)))["error_code"] is ErrorCode.invalid_record
    assert (await produce(dataplane, "table", 0, batch(key=b"id")))["error_code"] is ErrorCode.none


async def test_log_append_time_topics_stamp_the_broker_time(node):
    dataplane = node.dataplane
    await dataplane.topics.create("stamped", 1, 1, {"message.timestamp.type": "LogAppendTime"})
    part = await produce(dataplane, "stamped", 0, batch(2, ts=5))
    assert part["log_append_time"] == node.clock.wall_ms()
    stored = await dataplane.topics.log("stamped", 0).read(0, 1 << 20)
    header = parse_header(stored)
    assert header.timestamp_type == 1 and header.max_timestamp == node.clock.wall_ms()
    assert list(iter_batches(stored, verify=True))          # the CRC was recomputed


async def test_one_bad_partition_does_not_fail_the_others(dataplane):
    await dataplane.topics.create("orders", 2)
    response = await dataplane.produce.produce(acks=1, api_version=9, topics=[
        TopicData("orders", (PartitionData(0, batch()), PartitionData(1, corrupt_crc(batch())),
                             PartitionData(9, batch())))])
    errors = [p["error_code"] for p in response["responses"][0]["partition_responses"]]
    assert errors == [ErrorCode.none, ErrorCode.corrupt_message, ErrorCode.unknown_topic_or_partition]


async def test_invalid_acks_are_refused(dataplane):
    await dataplane.topics.create("orders", 1)
    assert (await produce(dataplane, "orders", 0, batch(), acks=2))["error_code"] is ErrorCode.invalid_required_acks


# ---- idempotence ----------------------------------------------------------------------------------

async def test_a_retried_batch_is_acknowledged_with_its_original_offset(dataplane):
    await dataplane.topics.create("orders", 1)
    init = dataplane.init_producer_id(None, -1, -1)
    pid = init["producer_id"]
    assert init["producer_epoch"] == 0
    first = await produce(dataplane, "orders", 0, batch(3, pid=pid, epoch=0, seq=0))
    await produce(dataplane, "orders", 0, batch(2, pid=pid, epoch=0, seq=3))
    retry = await produce(dataplane, "orders", 0, batch(3, pid=pid, epoch=0, seq=0))
    assert (retry["error_code"], retry["base_offset"]) == (ErrorCode.none, first["base_offset"])
    assert dataplane.topics.log("orders", 0).log_end_offset == 5


async def test_a_sequence_gap_is_out_of_order(dataplane):
    await dataplane.topics.create("orders", 1)
    await produce(dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=0))
    gap = await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=0, seq=5))
    assert gap["error_code"] is ErrorCode.out_of_order_sequence_number


async def test_a_fenced_epoch_is_refused(dataplane):
    await dataplane.topics.create("orders", 1)
    await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=2, seq=0))
    old = await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=1, seq=1))
    assert old["error_code"] is ErrorCode.invalid_producer_epoch


async def test_sequence_and_epoch_refusals_carry_the_log_start_offset_as_kafka_does(dataplane):
    """The producer-state check runs inside Kafka's log append, so its refusals report the partition's log
    start offset (0 here), while a partition that does not exist answers -1."""
    await dataplane.topics.create("orders", 1)
    await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=1, seq=0))
    gap = await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=1, seq=5))
    fenced = await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=0, seq=1))
    missing = await produce(dataplane, "orders", 3, batch(1))
    assert (gap["error_code"], gap["base_offset"], gap["log_start_offset"]) == \
        (ErrorCode.out_of_order_sequence_number, -1, 0)
    assert (fenced["error_code"], fenced["base_offset"], fenced["log_start_offset"]) == \
        (ErrorCode.invalid_producer_epoch, -1, 0)
    assert (missing["error_code"], missing["log_start_offset"]) == (ErrorCode.unknown_topic_or_partition, -1)


async def test_duplicates_are_still_recognised_after_a_restart(node):
    await node.dataplane.topics.create("orders", 1)
    first = await produce(node.dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=0))
    await produce(node.dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=3))
    dataplane = await node.restart()
    retry = await produce(dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=0))
    assert retry["base_offset"] == first["base_offset"]
    gap = await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=0, seq=9))
    assert gap["error_code"] is ErrorCode.out_of_order_sequence_number
    following = await produce(dataplane, "orders", 0, batch(1, pid=PID, epoch=0, seq=6))
    assert (following["error_code"], following["base_offset"]) == (ErrorCode.none, 6)


async def test_producer_ids_are_never_reused_across_restarts(node):
    before = {node.dataplane.init_producer_id(None, -1, -1)["producer_id"] for _ in range(3)}
    dataplane = await node.restart()
    after = {dataplane.init_producer_id(None, -1, -1)["producer_id"] for _ in range(3)}
    assert len(before | after) == 6


async def test_transactional_init_producer_id_is_refused(dataplane):
    assert dataplane.init_producer_id("txn-1", -1, -1)["error_code"] is ErrorCode.coordinator_not_available
    assert dataplane.init_producer_id(None, 5, -1)["error_code"] is ErrorCode.invalid_request


async def test_pipelined_requests_append_in_arrival_order(dataplane):
    """A producer with 5 requests in flight: appends must keep their sequence order."""
    import asyncio
    await dataplane.topics.create("orders", 1)
    tasks = [asyncio.ensure_future(produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=2 * i)))
             for i in range(5)]
    results = await asyncio.gather(*tasks)
    assert [r["error_code"] for r in results] == [ErrorCode.none] * 5
    assert [r["base_offset"] for r in results] == [0, 2, 4, 6, 8]


async def test_a_retry_racing_its_original_gets_the_original_offset(dataplane):
    import asyncio
    await dataplane.topics.create("orders", 1)
    await produce(dataplane, "orders", 0, batch(1))
    same = batch(3, pid=PID, epoch=0, seq=0)
    first, retry = await asyncio.gather(produce(dataplane, "orders", 0, same), produce(dataplane, "orders", 0, same))
    assert first["base_offset"] == retry["base_offset"] == 1
    assert retry["error_code"] is ErrorCode.none
    assert dataplane.topics.log("orders", 0).log_end_offset == 4


async def test_a_failed_append_does_not_make_the_retry_a_duplicate(node):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    await produce(dataplane, "orders", 0, batch(1))
    log = dataplane.topics.log("orders", 0)
    await log.close()                       # the disk goes away under the partition
    failed = await produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=0))
    assert failed["error_code"] is ErrorCode.kafka_storage_error
    assert dataplane.producer_states.pending == {}
    state = await dataplane.producer_states.state_for(log)
    assert list(state.entry(PID).batches) == []


async def test_timestamps_outside_the_topic_window_are_invalid(node):
    dataplane = node.dataplane
    await dataplane.topics.create("recent", 1, 1, {"message.timestamp.before.max.ms": "60000",
                                                    "message.timestamp.after.max.ms": "1000"})
    now = node.clock.wall_ms()
    assert (await produce(dataplane, "recent", 0, batch(ts=now - 120_000)))["error_code"] is \
        ErrorCode.invalid_timestamp
    assert (await produce(dataplane, "recent", 0, batch(ts=now + 5_000)))["error_code"] is \
        ErrorCode.invalid_timestamp
    assert (await produce(dataplane, "recent", 0, batch(ts=now - 30_000)))["error_code"] is ErrorCode.none


async def test_by_default_a_record_more_than_an_hour_ahead_is_invalid_as_in_kafka_4(node):
    """Kafka 4's message.timestamp.after.max.ms defaults to an hour (3.x: unbounded); before.max.ms stays unbounded."""
    dataplane = node.dataplane
    await dataplane.topics.create("defaults", 1)
    now = node.clock.wall_ms()
    assert (await produce(dataplane, "defaults", 0, batch(ts=now + 2 * 3600_000)))["error_code"] is \
        ErrorCode.invalid_timestamp
    assert (await produce(dataplane, "defaults", 0, batch(ts=now + 1800_000)))["error_code"] is ErrorCode.none
    assert (await produce(dataplane, "defaults", 0, batch(ts=now - 365 * 86400_000)))["error_code"] is ErrorCode.none
