"""Compaction of transactional data by Kafka's rules: aborted data goes whatever its keys, markers stay
until their transaction's data is gone and their delete horizon passed, nothing past the LSO is cleaned,
and the cleaned segments keep the .txnindex entries of the aborts they still hold."""
from groupcoord.protocol.control_records import end_txn_marker_batch
from groupcoord.protocol.record_batch import encode_batch, iter_batches, decode_records
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.config import FsyncPolicy
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.txn_index import AbortedTxn
from tests.storage.conftest import small_config

RETENTION_MS = 60_000
NOW = 1_700_000_000_000
COMPACTED = small_config(cleanup_policy="compact", segment_bytes=1 << 20, delete_retention_ms=RETENTION_MS)
A, B = 11, 12


def data(pid, seq, *keys, txn=True):
    return encode_batch([(k, b"v-" + k, ()) for k in keys], producer_id=pid, producer_epoch=0, base_sequence=seq,
                        is_transactional=txn, base_timestamp=NOW)


def marker(pid, committed):
    return end_txn_marker_batch(pid, 0, 0, committed, NOW)


async def contents(log):
    out = []
    async for header, batch in log.batches(0):
        if header.is_control:
            out.append(("marker", header.producer_id, header.base_offset, header.has_delete_horizon))
        else:
            out.append(("data", header.producer_id, [r.key for r in decode_records(batch, 0, header)]))
    return out


async def build(tmp_path):
    log = await PartitionLog.open(tmp_path / "c-0", COMPACTED, FsyncPolicy.NEVER)
    await log.append(data(A, 0, b"x", b"y"))                     # 0-1  aborted
    await log.append(data(B, 0, b"x"))                           # 2    committed
    await log.append(marker(A, committed=False))                 # 3
    await log.append(marker(B, committed=True))                  # 4
    await log.append(data(A, 2, b"z"))                           # 5    A's next transaction, committed
    await log.append(marker(A, committed=True))                  # 6
    await log.append(data(-1, -1, b"y", txn=False))              # 7    plain
    await log.add_aborted_txn(AbortedTxn(A, 0, 3, 4))
    await log.roll()
    return log


async def test_aborted_data_goes_and_its_marker_stays_with_its_index_entry(tmp_path):
    log = await build(tmp_path)
    stats = await LogCleaner().clean(log, now_ms=NOW)
    assert stats.aborted_records_dropped == 2
    assert await contents(log) == [
        ("data", B, [b"x"]), ("marker", A, 3, False), ("marker", B, 4, False),
        ("data", A, [b"z"]), ("marker", A, 6, False), ("data", -1, [b"y"])]
    [cleaned] = log.segments[:-1]
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in cleaned.txn_index.entries] == [(A, 0, 3)]
    assert cleaned.txnindex_path.exists()
    await log.close()


async def test_markers_without_data_get_a_delete_horizon_then_go(tmp_path):
    log = await build(tmp_path)
    cleaner = LogCleaner()
    await cleaner.clean(log, now_ms=NOW)
    cleaner._first_dirty.clear()          # clean the whole log again, as a later pass over dirty data would
    await cleaner.clean(log, now_ms=NOW + 1)
    # the abort marker has no data left: stamped with a horizon; B's commit marker still guards B's record
    assert ("marker", A, 3, True) in await contents(log)
    assert ("marker", B, 4, False) in await contents(log)
    assert log.segments[0].txn_index.entries == []
    cleaner._first_dirty.clear()
    await cleaner.clean(log, now_ms=NOW + RETENTION_MS + 10)
    remaining = await contents(log)
    assert ("marker", A, 3, True) not in remaining and all(m[2] != 3 for m in remaining if m[0] == "marker")
    # A's last batch (its last commit marker) stays: the producer's epoch must survive
    assert ("marker", A, 6, False) in remaining or ("marker", A, 6, True) in remaining
    await log.close()


async def test_nothing_past_the_last_stable_offset_is_cleaned(tmp_path):
    log = await PartitionLog.open(tmp_path / "c-0", COMPACTED, FsyncPolicy.NEVER)
    await log.append(data(-1, -1, b"k", txn=False))     # 0
    await log.append(data(A, 0, b"k"))                  # 1, open transaction
    await log.roll()
    log.first_unstable_offset = lambda: 1
    target = LogCleaner().to_clean(log, NOW)
    assert target.first_uncleanable_offset == 0        # the segment holding the open transaction waits
    await LogCleaner().clean(log, now_ms=NOW)
    assert [c[2] for c in await contents(log)] == [[b"k"], [b"k"]]

    def unknown():
        raise LookupError("not loaded")

    log.first_unstable_offset = unknown
    assert LogCleaner().to_clean(log, NOW).first_uncleanable_offset == 0
    await log.close()


async def test_an_open_transaction_found_in_the_log_stops_cleaning_without_producer_state(tmp_path):
    """The cleaner reads the transactions from the log itself: with no producer state attached (as for
    __consumer_offsets, whose markers the group coordinator writes) an open transaction still holds it back,
    and an abort without any .txnindex entry still removes its data."""
    log = await PartitionLog.open(tmp_path / "c-0", COMPACTED, FsyncPolicy.NEVER)
    await log.append(data(-1, -1, b"k", txn=False))     # 0
    await log.append(data(B, 0, b"k"))                  # 1 aborted below, no .txnindex entry written
    await log.append(marker(B, committed=False))        # 2
    await log.roll()
    await log.append(data(A, 0, b"k"))                  # 3 open
    await log.append(data(-1, -1, b"j", txn=False))     # 4
    await log.roll()
    assert log.first_unstable_offset is None
    await LogCleaner().clean(log, now_ms=NOW)
    kept = await contents(log)
    assert kept[0] == ("data", -1, [b"k"])              # the aborted k did not shadow the committed one
    assert ("data", B, [b"k"]) not in kept
    assert ("data", A, [b"k"]) in kept and ("data", -1, [b"j"]) in kept   # the segment past the LSO is untouched
    await log.close()
