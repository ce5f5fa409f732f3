"""Transaction markers written into data partitions, as the transaction coordinator asks for them: the
control batch's layout, the producer state and last stable offset they move, the .txnindex of aborts, the
errors Kafka's WriteTxnMarkers answers, and what survives restarts."""
import asyncio
import struct

from groupcoord.protocol.control_records import ControlRecordType, read_end_txn_marker
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import decode_records
from groupcoord.storage.txn_index import ENTRY_SIZE

from groupcoord.coordinator.dataplane.txn_markers import TxnMarker

from .txn_support import READ_COMMITTED, READ_UNCOMMITTED, batches, fetch, produce, txn_batch, values

PID, OTHER = 7000, 7001


async def test_a_committed_transaction_is_held_back_until_its_marker(dataplane):
    await dataplane.topics.create("t", 1)
    assert (await produce(dataplane, txn_batch(PID, 0)))["base_offset"] == 0
    assert (await produce(dataplane, txn_batch(PID, 2)))["base_offset"] == 2
    held = await fetch(dataplane, 0)
    assert (held["high_watermark"], held["last_stable_offset"], held["records"]) == (4, 0, b"")
    uncommitted = await fetch(dataplane, 0, isolation=READ_UNCOMMITTED)
    assert uncommitted["last_stable_offset"] == 0 and len(values(uncommitted["records"])) == 4
    assert uncommitted["aborted_transactions"] is None

    errors = await dataplane.write_txn_markers([TxnMarker(PID, 0, 5, True, [("t", 0)])])
    assert errors == {("t", 0): ErrorCode.none}
    part = await fetch(dataplane, 0)
    assert (part["high_watermark"], part["last_stable_offset"]) == (5, 5)
    assert [offset for offset, _ in values(part["records"])] == [0, 1, 2, 3]
    assert part["aborted_transactions"] == []
    marker = batches(part["records"])[-1]
    assert marker.is_control and marker.is_transactional and marker.base_offset == 4
    assert (marker.producer_id, marker.producer_epoch, marker.base_sequence) == (PID, 0, -1)


async def test_the_marker_batch_is_laid_out_as_kafkas_end_transaction_marker(dataplane):
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(PID, 0, n=1))
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 3, False, [("t", 0)])])
    data = await dataplane.topics.log("t", 0).read(1, 1 << 20)
    [header] = batches(data)
    [record] = decode_records(data, 0, header)
    assert record.key == struct.pack(">hh", 0, 0)                 # version 0, ABORT
    assert record.value == struct.pack(">hi", 0, 3)               # version 0, coordinator epoch
    assert header.records_count == 1 and header.attributes == 0x30 and header.partition_leader_epoch == 0
    marker = read_end_txn_marker(data, 0, header)
    assert marker.control_type is ControlRecordType.ABORT and marker.coordinator_epoch == 3


async def test_an_aborted_transaction_is_listed_and_indexed(node):
    dataplane = node.dataplane
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(OTHER, 0, transactional=False), txn_id=None)    # offsets 0-1, plain
    await produce(dataplane, txn_batch(PID, 0))                                        # 2-3
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 1, False, [("t", 0)])])       # abort at 4
    part = await fetch(dataplane, 0)
    assert part["last_stable_offset"] == 5
    assert part["aborted_transactions"] == [{"producer_id": PID, "first_offset": 2}]
    # a fetch past the aborted transaction's marker does not list it
    assert (await fetch(dataplane, 5))["aborted_transactions"] == []
    index = dataplane.topics.log("t", 0).directory / "00000000000000000000.txnindex"
    raw = index.read_bytes()
    assert len(raw) == ENTRY_SIZE
    assert struct.unpack(">hqqqq", raw) == (0, PID, 2, 4, 5)


async def test_the_lso_is_the_earliest_open_transaction_of_any_producer(dataplane):
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(PID, 0))        # 0-1
    await produce(dataplane, txn_batch(OTHER, 0))      # 2-3
    assert (await fetch(dataplane, 0))["last_stable_offset"] == 0
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 1, False, [("t", 0)])])      # abort at 4
    part = await fetch(dataplane, 0)
    assert part["last_stable_offset"] == 2 and values(part["records"]) == [(0, b"k0"), (1, b"k1")]
    entries = dataplane.topics.log("t", 0).collect_aborted_txns(0, 10)
    assert [(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in entries] == [(PID, 0, 4, 2)]
    await dataplane.write_txn_markers([TxnMarker(OTHER, 0, 1, True, [("t", 0)])])      # commit at 5
    assert (await fetch(dataplane, 0))["last_stable_offset"] == 6


async def test_marker_errors_as_kafka_answers_them(dataplane):
    await dataplane.topics.create("t", 2)
    await produce(dataplane, txn_batch(PID, 0, epoch=3))
    errors = await dataplane.write_txn_markers([
        TxnMarker(PID, 2, 1, True, [("t", 0), ("t", 9), ("missing", 0)])])
    assert errors == {("t", 0): ErrorCode.invalid_producer_epoch, ("t", 9): ErrorCode.unknown_topic_or_partition,
                      ("missing", 0): ErrorCode.unknown_topic_or_partition}
    assert await dataplane.write_txn_markers([TxnMarker(PID, 3, 4, True, [("t", 0)])]) == {("t", 0): ErrorCode.none}
    assert await dataplane.write_txn_markers([TxnMarker(PID, 3, 2, True, [("t", 0)])]) == {
        ("t", 0): ErrorCode.transaction_coordinator_fenced}
    assert await dataplane.write_txn_markers([]) == {}


async def test_a_marker_in_a_partition_the_transaction_never_wrote_changes_nothing_visible(dataplane):
    await dataplane.topics.create("t", 1)
    assert await dataplane.write_txn_markers([TxnMarker(PID, 0, 0, False, [("t", 0)])]) == {("t", 0): ErrorCode.none}
    part = await fetch(dataplane, 0)
    assert (part["high_watermark"], part["last_stable_offset"], part["aborted_transactions"]) == (1, 1, [])
    assert dataplane.topics.log("t", 0).collect_aborted_txns(0, 10) == []


async def test_a_plain_write_inside_an_open_transaction_is_refused(dataplane):
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(PID, 0))
    part = await produce(dataplane, txn_batch(PID, 2, transactional=False))
    assert part["error_code"] is ErrorCode.invalid_txn_state
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 0, True, [("t", 0)])])
    assert (await produce(dataplane, txn_batch(PID, 2, transactional=False)))["error_code"] is ErrorCode.none


async def test_an_epoch_bumping_abort_fences_the_old_producer(dataplane):
    """Kafka's fencing: the coordinator aborts with the bumped epoch; the old incarnation's writes are then
    refused with INVALID_PRODUCER_EPOCH."""
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(PID, 0, epoch=0))
    await dataplane.write_txn_markers([TxnMarker(PID, 1, 0, False, [("t", 0)])])
    part = await produce(dataplane, txn_batch(PID, 2, epoch=0))
    assert part["error_code"] is ErrorCode.invalid_producer_epoch
    assert (await produce(dataplane, txn_batch(PID, 0, epoch=1)))["error_code"] is ErrorCode.none


async def test_a_parked_read_committed_fetch_wakes_when_the_transaction_commits(node):
    dataplane = node.dataplane
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(PID, 0))
    parked = asyncio.ensure_future(fetch(dataplane, 0, max_wait_ms=60_000))
    await asyncio.sleep(0.05)
    assert not parked.done()
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 0, True, [("t", 0)])])
    part = await asyncio.wait_for(parked, 5)
    assert part["last_stable_offset"] == 3 and len(values(part["records"])) == 2


async def test_list_offsets_latest_at_read_committed_is_the_lso(dataplane):
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(OTHER, 0, transactional=False), txn_id=None)
    await produce(dataplane, txn_batch(PID, 0))
    answer = await dataplane.list_offsets.list_offsets([("t", [(0, -1)])], isolation_level=1)
    assert answer["topics"][0]["partitions"][0]["offset"] == 2
    answer = await dataplane.list_offsets.list_offsets([("t", [(0, -1)])], isolation_level=0)
    assert answer["topics"][0]["partitions"][0]["offset"] == 4


async def test_open_transactions_and_the_index_survive_a_clean_restart(node):
    dataplane = node.dataplane
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(OTHER, 0))                                   # 0-1 aborted below
    await dataplane.write_txn_markers([TxnMarker(OTHER, 0, 0, False, [("t", 0)])])  # 2
    await produce(dataplane, txn_batch(PID, 0))                                     # 3-4, still open
    dataplane = await node.restart()
    part = await fetch(dataplane, 0)
    assert part["last_stable_offset"] == 3
    assert part["aborted_transactions"] == [{"producer_id": OTHER, "first_offset": 0}]
    assert (await produce(dataplane, txn_batch(PID, 2, transactional=False)))["error_code"] is ErrorCode.invalid_txn_state
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 0, True, [("t", 0)])])
    assert (await fetch(dataplane, 0))["last_stable_offset"] == 6


async def test_a_crash_rebuilds_open_transactions_and_a_lost_index_entry_from_the_log(node):
    dataplane = node.dataplane
    await dataplane.topics.create("t", 1)
    await produce(dataplane, txn_batch(OTHER, 0))
    await dataplane.write_txn_markers([TxnMarker(OTHER, 0, 0, False, [("t", 0)])])
    await produce(dataplane, txn_batch(PID, 0))
    log_dir = dataplane.topics.log("t", 0).directory
    dataplane = await node.crash_restart()
    (log_dir / "00000000000000000000.txnindex").unlink()
    # the file is gone from under the open log: a fresh start must rebuild it from the markers
    dataplane = await node.crash_restart()
    part = await fetch(dataplane, 0)
    assert part["last_stable_offset"] == 3
    assert part["aborted_transactions"] == [{"producer_id": OTHER, "first_offset": 0}]
    assert (log_dir / "00000000000000000000.txnindex").stat().st_size == ENTRY_SIZE


async def test_verification_asks_the_coordinator_once_per_transaction_and_partition(dataplane):
    await dataplane.topics.create("t", 1)
    asked = []
    answers = {"error": ErrorCode.invalid_txn_state}

    async def verifier(txn_id, pid, epoch, partitions):
        asked.append((txn_id, pid, epoch, tuple(partitions)))
        return {tp: answers["error"] for tp in partitions}

    dataplane.set_transaction_verifier(verifier)
    part = await produce(dataplane, txn_batch(PID, 0))
    assert part["error_code"] is ErrorCode.invalid_txn_state
    answers["error"] = ErrorCode.concurrent_transactions
    assert (await produce(dataplane, txn_batch(PID, 0)))["error_code"] is ErrorCode.not_enough_replicas
    answers["error"] = ErrorCode.none
    assert (await produce(dataplane, txn_batch(PID, 0)))["error_code"] is ErrorCode.none
    assert (await produce(dataplane, txn_batch(PID, 2)))["error_code"] is ErrorCode.none
    assert asked == [("app-1", PID, 0, (("t", 0),))] * 3
    assert dataplane.topics.log("t", 0).log_end_offset == 4


async def test_an_abort_in_a_later_segment_is_listed_for_a_fetch_of_an_earlier_one(dataplane):
    """Two interleaved transactions, the earlier-begun aborted last, its marker segments later: a fetch of the
    first batches lists it (Kafka's search would stop at the first marker past the fetched range)."""
    await dataplane.topics.create("t", 1, configs={"segment.bytes": "300"})
    log = dataplane.topics.log("t", 0)
    await produce(dataplane, txn_batch(PID, 0, value=b"x" * 60))        # 0-1
    await produce(dataplane, txn_batch(OTHER, 0, value=b"x" * 60))      # 2-3
    await dataplane.write_txn_markers([TxnMarker(OTHER, 0, 0, False, [("t", 0)])])     # 4
    for seq in range(2, 10, 2):
        await produce(dataplane, txn_batch(PID, seq, value=b"x" * 60))  # 5-12
    await dataplane.write_txn_markers([TxnMarker(PID, 0, 0, False, [("t", 0)])])       # 13
    assert len(log.segments) > 2
    first = await fetch(dataplane, 0)            # a read stops at its segment's end: offsets 0-1 only
    assert [h.last_offset for h in batches(first["records"])] == [1]
    assert first["aborted_transactions"] == [{"producer_id": PID, "first_offset": 0}]
    second = await fetch(dataplane, 2)
    listed = {(a["producer_id"], a["first_offset"]) for a in second["aborted_transactions"]}
    assert listed == {(PID, 0), (OTHER, 2)}
    assert second["last_stable_offset"] == 14
