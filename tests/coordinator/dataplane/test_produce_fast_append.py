"""Produce through the log's synchronous reservation (PartitionLog.append_now: no Task per partition) and through
the general append it falls back to (the log's append lock held or waited for, e.g. by a rolling append): the
same answers, offsets and producer bookkeeping either way."""
import asyncio

import pytest

from groupcoord.protocol.errors import ErrorCode
from groupcoord.storage.segment import Segment

from tests.coordinator.dataplane.test_produce import PID, batch, produce, read_all
from tests.coordinator.dataplane.txn_support import fetch, txn_batch
from tests.coordinator.dataplane.txn_support import produce as produce_txn


def general_path_only(log):
    """Make every append of ``log`` take the lock (the fallback), as a busy log would."""
    log._takes_now = lambda: False


@pytest.mark.parametrize("path", ["reserved at once", "general"])
async def test_idempotent_batches_and_a_retry_in_flight_get_the_same_answers_on_either_path(dataplane, path):
    await dataplane.topics.create("orders", 1)
    log = dataplane.topics.log("orders", 0)
    if path == "general":
        general_path_only(log)
    first, retry, second = await asyncio.gather(
        produce(dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=0)),
        produce(dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=0)),   # while the original is in flight
        produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=3)))
    assert [(p["error_code"], p["base_offset"]) for p in (first, retry, second)] == \
        [(ErrorCode.none, 0), (ErrorCode.none, 0), (ErrorCode.none, 3)]
    assert dataplane.producer_states.pending == {}
    state = await dataplane.producer_states.state_for(log)
    assert [(b.first_seq, b.first_offset, b.last_offset) for b in state.entry(PID).batches] == [(0, 0, 2), (3, 3, 4)]
    late_retry = await produce(dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=0))
    assert (late_retry["error_code"], late_retry["base_offset"]) == (ErrorCode.none, 0)
    assert [r.offset for r in await read_all(dataplane, "orders")] == [0, 1, 2, 3, 4]


async def test_a_batch_arriving_while_the_log_lock_is_held_waits_its_turn_and_keeps_the_order(dataplane):
    await dataplane.topics.create("orders", 1)
    log = dataplane.topics.log("orders", 0)
    assert log._append_lock.try_acquire()  # as an append rolling the segment holds it
    behind = [asyncio.ensure_future(produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=2 * i)))
              for i in range(3)]
    await asyncio.sleep(0.01)
    assert not any(task.done() for task in behind) and log.log_end_offset == 0
    log._append_lock.release()
    answers = await asyncio.gather(*behind)
    assert [(a["error_code"], a["base_offset"]) for a in answers] == [(ErrorCode.none, 0), (ErrorCode.none, 2),
                                                                       (ErrorCode.none, 4)]
    after = await produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=6))
    assert after["base_offset"] == 6


@pytest.mark.parametrize("path", ["reserved at once", "general"])
async def test_a_transaction_begins_at_the_offset_the_log_gave_on_either_path(dataplane, path):
    await dataplane.topics.create("t", 1)
    if path == "general":
        general_path_only(dataplane.topics.log("t", 0))
    assert (await produce_txn(dataplane, batch(1)))["base_offset"] == 0
    part = await produce_txn(dataplane, txn_batch(7, 0))
    assert (part["error_code"], part["base_offset"]) == (ErrorCode.none, 1)
    fetched = await fetch(dataplane)
    assert fetched["last_stable_offset"] == 1, "the open transaction holds readers back from its first offset"


async def test_a_failed_append_on_the_fast_path_lets_the_retry_through(node, monkeypatch):
    dataplane = node.dataplane
    await dataplane.topics.create("orders", 1)
    log = dataplane.topics.log("orders", 0)
    log.write_retry_backoff_s = 0.0
    real_write = Segment.write_at

    def broken_disk(self, position, data):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Segment, "write_at", broken_disk)
    failed = await produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=0))
    assert failed["error_code"] is ErrorCode.kafka_storage_error
    await asyncio.sleep(0)  # the bookkeeping is the completion's callback, already scheduled before the answer
    assert dataplane.producer_states.pending == {}
    state = await dataplane.producer_states.state_for(log)
    assert list(state.entry(PID).batches) == [], "the failed batch is forgotten"
    monkeypatch.setattr(Segment, "write_at", real_write)
    retried = await produce(dataplane, "orders", 0, batch(2, pid=PID, epoch=0, seq=0))
    assert (retried["error_code"], retried["base_offset"]) == (ErrorCode.none, 0)
