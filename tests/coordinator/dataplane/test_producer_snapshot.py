"""Idempotence survives restarts, clean (from the producer snapshot) or not (replaying the log)."""
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch

from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData
from groupcoord.coordinator.dataplane.producer_snapshot import SNAPSHOT_FILE, read_snapshot, write_snapshot
from groupcoord.coordinator.dataplane.producer_state import INT32_MAX, PartitionProducerState

PID = 77


def batch(n, seq):
    return encode_batch([(b"k", b"v", ())] * n, producer_id=PID, producer_epoch=0, base_sequence=seq)


async def produce(dataplane, records):
    response = await dataplane.produce.produce(acks=-1, api_version=9, topics=[
        TopicData("orders", (PartitionData(0, records),))])
    return response["responses"][0]["partition_responses"][0]


def snapshot_path(dataplane):
    return dataplane.topics.log("orders", 0).directory / SNAPSHOT_FILE


async def test_a_clean_stop_writes_a_snapshot_that_the_next_start_uses(node):
    await node.dataplane.topics.create("orders", 1)
    first = await produce(node.dataplane, batch(3, 0))
    dataplane = await node.restart()
    snapshot = read_snapshot(snapshot_path(dataplane).parent)
    assert snapshot.end_offset == 3
    assert snapshot.state.entry(PID).last_seq == 2
    retry = await produce(dataplane, batch(3, 0))
    assert (retry["error_code"], retry["base_offset"]) == (ErrorCode.none, first["base_offset"])
    assert dataplane.topics.log("orders", 0).log_end_offset == 3


async def test_batches_after_the_snapshot_are_replayed_after_a_crash(node):
    await node.dataplane.topics.create("orders", 1)
    await produce(node.dataplane, batch(3, 0))
    node.dataplane.producer_states.write_snapshots(node.dataplane.topics.log)
    after = await produce(node.dataplane, batch(2, 3))
    dataplane = await node.crash_restart()
    retry = await produce(dataplane, batch(2, 3))
    assert retry["base_offset"] == after["base_offset"] == 3
    assert (await produce(dataplane, batch(1, 9)))["error_code"] is ErrorCode.out_of_order_sequence_number
    assert (await produce(dataplane, batch(1, 5)))["error_code"] is ErrorCode.none


async def test_without_a_snapshot_the_whole_log_is_replayed(node):
    await node.dataplane.topics.create("orders", 1)
    first = await produce(node.dataplane, batch(3, 0))
    dataplane = await node.crash_restart()
    assert not snapshot_path(dataplane).exists()
    assert (await produce(dataplane, batch(3, 0)))["base_offset"] == first["base_offset"]


async def test_a_snapshot_beyond_the_log_end_is_ignored(node):
    await node.dataplane.topics.create("orders", 1)
    await produce(node.dataplane, batch(3, 0))
    directory = snapshot_path(node.dataplane).parent
    stale = PartitionProducerState()
    stale.record(PID, 0, 0, 50, 0, 49, 0)           # claims 50 records the log does not have
    write_snapshot(directory, 50, stale)
    dataplane = await node.crash_restart()
    assert (await produce(dataplane, batch(1, 3)))["error_code"] is ErrorCode.none


def test_snapshots_round_trip_wrapped_sequences(tmp_path):
    state = PartitionProducerState()
    state.record(PID, 4, INT32_MAX - 1, 4, 10, 13, 123)
    write_snapshot(tmp_path, 14, state)
    loaded = read_snapshot(tmp_path)
    [entry] = loaded.state.entries()
    [recorded] = entry.batches
    assert (entry.epoch, recorded.first_seq, recorded.last_seq, recorded.first_offset) == (4, INT32_MAX - 1, 1, 10)


def test_a_snapshot_keeps_open_transactions_and_reads_the_version_before_transactions(tmp_path):
    state = PartitionProducerState()
    state.record(PID, 2, 0, 2, 10, 11, 5, is_transactional=True)
    state.complete_txn(88, 1, 4, 12, False, 6)          # a producer known only from its marker
    write_snapshot(tmp_path, 13, state)
    loaded = read_snapshot(tmp_path).state
    assert loaded.ongoing == {PID: 10} and loaded.entry(PID).current_txn_first_offset == 10
    assert loaded.entry(88).coordinator_epoch == 4 and loaded.entry(88).epoch == 1
    assert loaded.last_stable_offset(13) == 10
    (tmp_path / SNAPSHOT_FILE).write_text(
        '{"version": 1, "end_offset": 3, "producers": [{"id": 77, "epoch": 0, "batches": [[0, 2, 0, 2, 5]]}]}')
    old = read_snapshot(tmp_path)
    assert old.end_offset == 3 and old.state.entry(PID).last_seq == 2 and not old.state.ongoing
