"""The share partition's state machine as scenarios: acquire, acknowledge, lock expiry, delivery limit."""

from __future__ import annotations

import uuid

from groupcoord.coordinator.share.share_partition import (
    AckBatch,
    AcknowledgeType,
    AcquiredRecords,
    LogBatch,
    RecordState,
    SharePartition,
)
from groupcoord.coordinator.share.records import StateBatch
from groupcoord.protocol.errors import ErrorCode

TOPIC = uuid.UUID(int=7)
ACCEPT, RELEASE, REJECT, RENEW, GAP = (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT,
                                       AcknowledgeType.RENEW, AcknowledgeType.GAP)


def partition(**kw) -> SharePartition:
    kw.setdefault("start_offset", 0)
    kw.setdefault("lock_duration_ms", 1000)
    return SharePartition("g", TOPIC, 0, **kw)


def log(first: int, last: int) -> list[LogBatch]:
    return [LogBatch(first, last)]


def test_acquire_gives_each_record_to_one_member_only():
    sp = partition()
    a = sp.acquire("a", log(0, 9), 5, now=0, record_limit=True)
    b = sp.acquire("b", log(0, 9), 100, now=0)
    assert a == [AcquiredRecords(0, 4, 1)]
    assert b == [AcquiredRecords(5, 9, 1)]
    assert sp.acquire("c", log(0, 9), 100, now=0) == []
    assert sp.acquired_count("a") == 5 and sp.acquired_count("b") == 5


def test_accept_moves_the_start_offset_and_is_persisted():
    sp = partition()
    sp.acquire("a", log(0, 4), 100, now=0)
    assert sp.acknowledge("a", [AckBatch(0, 2, (ACCEPT,))], now=1) == ErrorCode.none
    # As Kafka's: the write carries the start offset from before it and the records finished past it; the
    # start moves once the write is made, and the next write carries it.
    write = sp.take_write()
    assert (write.start_offset, write.batches, write.delivery_complete_count) == (0, (StateBatch(0, 2, 2, 1),), 3)
    assert sp.start_offset == 3 and sp.has_write()
    assert sp.take_write().start_offset == 3
    assert sp.next_fetch_offset() == 5


def test_acknowledging_a_record_held_by_another_member_is_refused_whole():
    sp = partition()
    sp.acquire("a", log(0, 1), 1, now=0, record_limit=True)
    sp.acquire("b", log(0, 1), 1, now=0, record_limit=True)
    assert sp.acknowledge("a", [AckBatch(0, 1, (ACCEPT,))], now=1) == ErrorCode.invalid_record_state
    assert sp.state_of(0) is RecordState.ACQUIRED and sp.state_of(1) is RecordState.ACQUIRED


def test_release_makes_a_record_available_again_with_a_higher_delivery_count():
    sp = partition()
    sp.acquire("a", log(0, 2), 100, now=0)
    assert sp.acknowledge("a", [AckBatch(1, 1, (RELEASE,))], now=1) == ErrorCode.none
    assert sp.state_of(1) is RecordState.AVAILABLE
    assert sp.next_fetch_offset() == 1
    assert sp.acquire("b", log(0, 2), 100, now=2) == [AcquiredRecords(1, 1, 2)]


def test_reject_archives():
    sp = partition()
    sp.acquire("a", log(0, 1), 100, now=0)
    sp.acknowledge("a", [AckBatch(0, 1, (REJECT, ACCEPT))], now=1)
    assert sp.take_write().batches == (StateBatch(0, 0, 4, 1), StateBatch(1, 1, 2, 1))
    assert sp.start_offset == 2 and sp.records == {}


def test_lock_expiry_redelivers_to_another_member():
    sp = partition(lock_duration_ms=1000)
    sp.acquire("a", log(0, 0), 100, now=0)
    assert sp.next_deadline() == 1000
    assert sp.expire_locks(999) == 0
    assert sp.expire_locks(1000) == 1
    assert sp.acquire("b", log(0, 0), 100, now=1001) == [AcquiredRecords(0, 0, 2)]
    # the first member's late acknowledgement is refused
    assert sp.acknowledge("a", [AckBatch(0, 0, (ACCEPT,))], now=1002) == ErrorCode.invalid_record_state


def test_delivery_count_limit_archives_the_record():
    sp = partition(delivery_limit=3)
    for attempt in range(1, 4):
        assert sp.acquire("a", log(0, 0), 1, now=attempt * 10) == [AcquiredRecords(0, 0, attempt)]
        sp.acknowledge("a", [AckBatch(0, 0, (RELEASE,))], now=attempt * 10 + 1)
    sp.take_write()
    assert sp.start_offset == 1  # archived after the third delivery, so finished
    assert sp.archived_by_limit == 1


def test_renew_extends_the_lock():
    sp = partition(lock_duration_ms=1000)
    sp.acquire("a", log(0, 0), 1, now=0)
    sp.acknowledge("a", [AckBatch(0, 0, (RENEW,))], now=900)
    assert sp.expire_locks(1500) == 0
    assert sp.expire_locks(1900) == 1


def test_max_records_is_checked_at_batch_boundaries_unless_record_limited():
    sp = partition()
    batches = [LogBatch(0, 3), LogBatch(4, 7), LogBatch(8, 9)]
    assert sp.acquire("a", batches, 2, now=0) == [AcquiredRecords(0, 3, 1)]  # the batch begun, whole
    assert sp.acquire("b", batches, 5, now=0) == [AcquiredRecords(4, 9, 1)]
    sp2 = partition()
    assert sp2.acquire("a", batches, 2, now=0, record_limit=True) == [AcquiredRecords(0, 1, 1)]


def test_max_record_locks_bounds_what_is_in_flight():
    sp = partition(max_record_locks=4)
    assert sp.acquire("a", log(0, 9), 100, now=0) == [AcquiredRecords(0, 3, 1)]
    assert not sp.can_acquire()
    sp.acknowledge("a", [AckBatch(0, 1, (ACCEPT,))], now=1)
    sp.take_write()
    assert sp.acquire("a", log(4, 9), 100, now=2) == [AcquiredRecords(4, 5, 1)]


def test_member_leaving_releases_its_records():
    sp = partition()
    sp.acquire("a", log(0, 3), 2, now=0, record_limit=True)
    sp.acquire("b", log(0, 3), 2, now=0, record_limit=True)
    assert sp.release_member("a") == 2
    assert sp.acquire("b", log(0, 3), 10, now=1) == [AcquiredRecords(0, 1, 2)]


def test_undeliverable_batches_are_archived_unseen_and_gaps_in_the_log_skipped():
    sp = partition()
    got = sp.acquire("a", [LogBatch(0, 1), LogBatch(2, 2, deliverable=False), LogBatch(5, 6)], 100, now=0)
    assert got == [AcquiredRecords(0, 1, 1), AcquiredRecords(5, 6, 1)]
    sp.acknowledge("a", [AckBatch(0, 1, (ACCEPT,)), AckBatch(5, 6, (ACCEPT, GAP))], now=1)
    sp.take_write()
    assert sp.start_offset == 7


def test_state_written_then_loaded_gives_the_same_partition():
    sp = partition(delivery_limit=5)
    sp.acquire("a", log(0, 5), 100, now=0)
    sp.acknowledge("a", [AckBatch(1, 1, (ACCEPT,)), AckBatch(2, 2, (RELEASE,)), AckBatch(3, 3, (REJECT,))], now=1)
    write = sp.take_write()
    assert write.start_offset == 0
    assert write.batches == (StateBatch(1, 1, 2, 1), StateBatch(2, 2, 0, 1), StateBatch(3, 3, 4, 1))
    loaded = partition(start_offset=write.start_offset, batches=write.batches)
    assert loaded.next_fetch_offset() == 0  # offset 0 was acquired, never acknowledged: delivered again
    got = loaded.acquire("b", log(0, 5), 100, now=10)
    assert got == [AcquiredRecords(0, 0, 1), AcquiredRecords(2, 2, 2), AcquiredRecords(4, 5, 1)]


def test_bad_acknowledgements_are_invalid_requests():
    sp = partition()
    sp.acquire("a", log(0, 3), 100, now=0)
    assert sp.acknowledge("a", [AckBatch(0, 3, (ACCEPT, ACCEPT))], now=1) == ErrorCode.invalid_request
    assert sp.acknowledge("a", [AckBatch(3, 0, (ACCEPT,))], now=1) == ErrorCode.invalid_request
    assert sp.acknowledge("a", [AckBatch(0, 0, (9,))], now=1) == ErrorCode.invalid_request
    assert sp.acknowledge("a", [AckBatch(3, 7, (ACCEPT,))], now=1) == ErrorCode.invalid_request  # past the last in flight
