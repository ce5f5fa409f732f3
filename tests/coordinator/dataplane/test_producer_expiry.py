"""Idle idempotent producers are forgotten after producer.id.expiration.ms, checked every
producer.id.expiration.check.interval.ms (Kafka's removeExpiredProducers), on a fake clock."""
import pytest

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch

from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData
from groupcoord.coordinator.dataplane.producer_state import PartitionProducerState

from tests.coordinator.dataplane.conftest import Node

IDLE, ACTIVE = 501, 502
HOUR = 3_600_000
EXPIRATION = 24 * HOUR            # Kafka's default producer.id.expiration.ms
CHECK_INTERVAL = 10 * 60_000      # Kafka's default producer.id.expiration.check.interval.ms


def batch(pid, seq, sent_at, n=1):
    return encode_batch([(b"k", b"v", ())] * n, producer_id=pid, producer_epoch=0, base_sequence=seq,
                        base_timestamp=sent_at)


async def produce(node, pid, seq, n=1, topic="orders"):
    response = await node.dataplane.produce.produce(acks=-1, api_version=9, topics=[
        TopicData(topic, (PartitionData(0, batch(pid, seq, node.clock.wall_ms(), n)),))])
    return response["responses"][0]["partition_responses"][0]


async def table(node, topic="orders"):
    return await node.dataplane.producer_states.state_for(node.dataplane.topics.log(topic, 0))


@pytest.fixture
async def node(tmp_path):
    n = Node(tmp_path / "data")
    await n.start()
    await n.dataplane.topics.create("orders", 1)
    yield n
    await n.stop()


def test_a_producer_expires_exactly_when_its_last_batch_is_the_expiration_old():
    state = PartitionProducerState()
    state.record(IDLE, 0, 0, 1, 0, 0, 1_000)
    state.record(IDLE, 0, 1, 1, 1, 1, 5_000)       # the latest batch counts, not the first
    assert state.remove_expired(5_000 + EXPIRATION - 1, EXPIRATION) == []
    assert state.remove_expired(5_000 + EXPIRATION, EXPIRATION) == [IDLE]
    assert state.entry(IDLE) is None


async def test_an_idle_producer_is_forgotten_and_an_active_one_kept(node):
    await produce(node, IDLE, 0)
    await produce(node, ACTIVE, 0)
    for seq in range(1, 5):                        # ACTIVE sends every 8 hours, IDLE never again
        node.clock.advance(8 * HOUR)
        assert (await produce(node, ACTIVE, seq))["error_code"] is ErrorCode.none
    # 32 hours on: the periodic check has run; IDLE's last batch is older than 24 hours.
    state = await table(node)
    assert state.entry(IDLE) is None
    assert state.entry(ACTIVE).last_seq == 4


async def test_expiry_waits_for_the_periodic_check(node):
    node.clock.advance(CHECK_INTERVAL // 2)        # half-way between two checks
    await produce(node, IDLE, 0)
    node.clock.advance(EXPIRATION)                 # due now, but the next check is half an interval away
    assert (await table(node)).entry(IDLE) is not None
    node.clock.advance(CHECK_INTERVAL // 2 - 1)
    assert (await table(node)).entry(IDLE) is not None
    node.clock.advance(1)
    assert (await table(node)).entry(IDLE) is None


async def test_after_expiry_the_producer_is_accepted_at_any_sequence_as_kafka_3_and_4_do(node):
    first = await produce(node, IDLE, 0, n=3)
    node.clock.advance(EXPIRATION + CHECK_INTERVAL)
    # No UNKNOWN_PRODUCER_ID (gone since KIP-360): a producer without state may resume at any sequence.
    resumed = await produce(node, IDLE, 3)
    assert (resumed["error_code"], resumed["base_offset"]) == (ErrorCode.none, 3)
    # From there on its sequence is checked again.
    assert (await produce(node, IDLE, 7))["error_code"] is ErrorCode.out_of_order_sequence_number
    assert (await produce(node, IDLE, 4))["error_code"] is ErrorCode.none
    assert first["base_offset"] == 0


async def test_a_retry_from_before_the_expiry_is_no_longer_recognised(node):
    await produce(node, IDLE, 0, n=3)
    node.clock.advance(EXPIRATION + CHECK_INTERVAL)
    retry = await produce(node, IDLE, 0, n=3)
    assert (retry["error_code"], retry["base_offset"]) == (ErrorCode.none, 3)   # appended again


async def test_an_expired_producer_in_the_snapshot_is_not_loaded_after_a_restart(node):
    await produce(node, IDLE, 0)
    await node.stop()                              # writes the snapshot; no checks run while stopped
    node.clock.advance(EXPIRATION)
    await node.start()
    assert (await table(node)).entry(IDLE) is None


async def test_a_log_append_time_topic_measures_idleness_from_the_append_time(node):
    await node.dataplane.topics.create("stamped", 1, 1, {"message.timestamp.type": "LogAppendTime"})
    records = batch(IDLE, 0, sent_at=5)            # a client clock stuck in 1970
    response = await node.dataplane.produce.produce(acks=-1, api_version=9, topics=[
        TopicData("stamped", (PartitionData(0, records),))])
    assert response["responses"][0]["partition_responses"][0]["error_code"] is ErrorCode.none
    node.clock.advance(CHECK_INTERVAL)
    assert (await table(node, "stamped")).entry(IDLE) is not None


async def test_the_expiration_settings_are_the_brokers(tmp_path):
    node = Node(tmp_path / "data", producer_id_expiration_ms=60_000,
                producer_id_expiration_check_interval_ms=1_000)
    await node.start()
    try:
        await node.dataplane.topics.create("orders", 1)
        await produce(node, IDLE, 0)
        node.clock.advance(59_000)
        assert (await table(node)).entry(IDLE) is not None
        node.clock.advance(1_000)
        assert (await table(node)).entry(IDLE) is None
    finally:
        await node.stop()
