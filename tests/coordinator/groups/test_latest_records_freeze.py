"""A snapshot is written from the records as they were when it started, without copying them on the event
loop (a million offsets took most of a second to copy, a stall every client felt); what is committed while it
is written is kept aside and folded back in log order."""

from groupcoord.coordinator.groups.runtime.snapshot import LatestRecords, decode_snapshot, encode_snapshot


def filled(pairs):
    latest = LatestRecords.empty()
    for offset, (key, value) in enumerate(pairs):
        latest.add(offset, key, value)
    return latest


def test_records_added_during_a_snapshot_are_not_in_it_and_are_kept_in_log_order():
    latest = filled([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    records, end = latest.freeze()
    latest.add(3, b"a", b"4")       # an existing key, rewritten meanwhile
    latest.add(4, b"d", None)       # a new key (a tombstone)
    assert latest.get(b"a") == (3, b"4") and latest.get(b"b") == (1, b"2") and latest.get(b"d") == (4, None)
    assert latest.entries() == [(b"b", (1, b"2")), (b"c", (2, b"3")), (b"a", (3, b"4")), (b"d", (4, None))]
    data = encode_snapshot(7, end, records.items())
    assert decode_snapshot(data, 7) == (3, [(0, b"a", b"1"), (1, b"b", b"2"), (2, b"c", b"3")])
    latest.thaw()
    assert latest.overlay is None and latest.end_offset == 5
    sequential = filled([(b"a", b"1"), (b"b", b"2"), (b"c", b"3"), (b"a", b"4"), (b"d", None)])
    assert list(latest.records.items()) == list(sequential.records.items())
    assert len(latest) == 4


def test_a_snapshot_of_the_frozen_records_equals_one_of_a_copy():
    latest = filled([(b"k%d" % (n % 50), b"v%d" % n) for n in range(500)])
    copy = latest.entries()
    records, end = latest.freeze()
    assert encode_snapshot(1, end, records.items()) == encode_snapshot(1, end, copy)
    latest.thaw()
