"""A read planned on the loop and run on a thread (storage/planned_read.py) answers as the read of old: on into the
next segment when its own holds nothing for the offset, planned again when its segment was deleted meanwhile, and
its segment held until the plan is closed."""

from __future__ import annotations

from unittest import mock

from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.record_batch import encode_batch, parse_header, set_base_offset
from groupcoord.storage.planned_read import READ_AGAIN, READ_ON, PlannedRead
from tests.storage.conftest import small_config


def batch_at(base_offset: int, records: int = 3) -> bytes:
    data = bytearray(encode_batch([(b"k", b"v" * 40, ()) for _ in range(records)], base_timestamp=1000))
    set_base_offset(data, 0, base_offset)
    return bytes(data)


async def test_a_read_goes_on_into_the_next_segment_when_its_own_holds_nothing_for_the_offset(open_log):
    """Offsets 3-9 are missing (as after compaction): the segment holding offset 5 by its base has no batch for it,
    the read goes on into the next segment and answers its first batch."""
    log = await open_log(small_config(segment_bytes=len(batch_at(0)) + 1))  # each batch a segment of its own
    await log.append(batch_at(0), assign_offsets=False)
    await log.append(batch_at(10), assign_offsets=False)
    assert [segment.base_offset for segment in log.segments] == [0, 10]
    planned = log.plan_read(5, 1 << 20, log.read_bound())
    assert planned.resume_offset == 10
    try:
        assert planned.run(1 << 20, True) is READ_ON
    finally:
        planned.close()
    for region in (False, True):
        got = await log.read(5, 1 << 20, region=region)
        assert bytes(got) == batch_at(10)
        if type(got) is FileRegion:
            got.close()


async def test_a_read_whose_segment_was_deleted_meanwhile_is_planned_again(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(batch_at(0))
    expected = bytes(await log.read(0, 1 << 20))
    real = PlannedRead.run
    runs = []

    def deleted_once(self, max_bytes, min_one):
        runs.append(self)
        return READ_AGAIN if len(runs) == 1 else real(self, max_bytes, min_one)

    with mock.patch.object(PlannedRead, "run", deleted_once):
        assert bytes(await log.read(0, 1 << 20)) == expected
    assert len(runs) == 2 and runs[0] is not runs[1]


async def test_a_plan_holds_its_segment_until_closed(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20))
    await log.append(batch_at(0))
    segment = log.segments[0]
    planned = log.plan_read(0, 1 << 20, log.read_bound())
    segment.mark_deleted()
    assert not segment._closed  # a read holds it: its descriptor stays open
    assert planned.run(1 << 20, True) is READ_AGAIN
    planned.close()
    planned.close()  # once
    assert segment._closed


async def test_a_batch_too_large_for_the_bytes_left_answers_empty_rather_than_the_next_segments_batches(open_log):
    """Kafka's LogSegment.read answers empty, not null, when the batch holding the offset is found but does not fit
    (no min_one): the log does not go on to the next segment, whose batches would skip the offsets asked for."""
    log = await open_log(small_config(segment_bytes=len(batch_at(0, 20)) + 1))  # each batch a segment of its own
    await log.append(batch_at(0, 20))
    await log.append(batch_at(0, 1))
    assert [segment.base_offset for segment in log.segments] == [0, 20]
    for region in (False, True):
        assert bytes(await log.read(0, 200, min_one=False, region=region)) == b""
        whole = bytes(await log.read(0, 200, min_one=True, region=region))
        assert len(whole) == len(batch_at(0, 20)) and parse_header(whole).base_offset == 0
