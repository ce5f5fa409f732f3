"""The .txnindex beside a segment: Kafka's 34-byte entries, lookups, and its life with the segment."""
import struct

import pytest

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.index import IndexFormatError
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.txn_index import AbortedTxn, TransactionIndex


def test_entries_round_trip_in_kafkas_layout():
    index = TransactionIndex(0)
    index.append(AbortedTxn(5, 10, 20, 21))
    index.append(AbortedTxn(6, 12, 30, 31))
    raw = index.to_bytes()
    assert raw[:34] == struct.pack(">hqqqq", 0, 5, 10, 20, 21)
    assert TransactionIndex.from_bytes(0, raw).entries == index.entries


def test_a_repeated_marker_is_not_entered_twice_and_going_back_is_refused():
    index = TransactionIndex(0)
    assert index.append(AbortedTxn(5, 10, 20, 21))
    assert not index.append(AbortedTxn(5, 10, 20, 21))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(6, 1, 15, 16))


@pytest.mark.parametrize("raw", [b"\x00" * 33, struct.pack(">hqqqq", 1, 5, 10, 20, 21)])
def test_a_malformed_file_is_refused(raw):
    with pytest.raises(IndexFormatError):
        TransactionIndex.from_bytes(0, raw)


def test_collect_answers_the_transactions_open_in_the_range():
    index = TransactionIndex(0, [AbortedTxn(1, 0, 5, 6), AbortedTxn(2, 3, 9, 10), AbortedTxn(3, 12, 14, 15)])
    assert [e.producer_id for e in index.collect(6, 12)] == [2]
    assert [e.producer_id for e in index.collect(0, 4)] == [1, 2]
    assert [e.producer_id for e in index.collect(10, 20)] == [3]


async def test_entries_live_in_the_markers_segment_and_go_with_it(tmp_path):
    config = LogConfig(segment_bytes=200)
    log = await PartitionLog.open(tmp_path / "t-0", config, FsyncPolicy.ALWAYS)
    for _ in range(6):
        await log.append(encode_batch([(b"k", b"v" * 40, ())]))
    assert len(log.segments) > 2
    last = log.segments[1].base_offset - 1        # a marker at the end of the first segment
    await log.add_aborted_txn(AbortedTxn(9, 0, last, last + 1))
    segment = log.segments[0]
    assert segment.txnindex_path.read_bytes() == struct.pack(">hqqqq", 0, 9, 0, last, last + 1)
    assert [e.producer_id for e in log.collect_aborted_txns(0, 1)] == [9]
    await log.close()
    reopened = await PartitionLog.open(tmp_path / "t-0", config, FsyncPolicy.ALWAYS)
    assert [e.last_offset for e in reopened.collect_aborted_txns(0, 1)] == [last]
    await reopened.delete_segments(reopened.segments[:-1], "test")
    assert not segment.txnindex_path.exists()
    assert reopened.collect_aborted_txns(0, 100) == []
    await reopened.close()


async def test_recovery_drops_entries_past_a_cut_tail(tmp_path):
    log = await PartitionLog.open(tmp_path / "t-0", LogConfig(), FsyncPolicy.ALWAYS)
    for _ in range(3):
        await log.append(encode_batch([(b"k", b"v", ())]))
    await log.add_aborted_txn(AbortedTxn(9, 0, 2, 3))
    path = log.active_segment.log_path
    size = log.active_segment.size
    await log.close()
    (tmp_path / "t-0" / ".kafka_cleanshutdown").unlink()
    with open(path, "r+b") as handle:
        handle.truncate(size - 5)          # the last batch (offset 2, the "marker") is torn
    reopened = await PartitionLog.open(tmp_path / "t-0", LogConfig(), FsyncPolicy.ALWAYS)
    assert reopened.log_end_offset == 2
    assert reopened.collect_aborted_txns(0, 10) == []
    assert not reopened.active_segment.txnindex_path.exists()
    await reopened.close()
