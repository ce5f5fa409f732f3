"""A fetch's read as a file region (segment_reads.read_region) holds exactly the batches today's read returns.

The region is found from batch headers and the offset index alone; these tests hold it byte for byte to
``read_batches`` (the bytes read and CRC-checked) over batch sizes, byte budgets, high watermarks and segment
rolls, and check what a region keeps when its segment is deleted and that no descriptor outlives it.
"""

import asyncio
import os
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol.file_region import FileRegion
from groupcoord.protocol.record_batch import encode_batch, iter_batches
from groupcoord.storage import segment_reads
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.log import PartitionLog
from groupcoord.storage.log_manager import LogManager
from tests.storage.conftest import small_config
from tests.support.descriptors import open_fds


def batch(records: int, size: int, seed: int) -> bytes:
    return encode_batch([(b"k%d" % i, bytes([seed % 251]) * size, ()) for i in range(records)], base_timestamp=1000)


async def both_reads(log: PartitionLog, offset: int, max_bytes: int, min_one: bool, max_offset: int | None):
    expected = await log.read(offset, max_bytes, min_one=min_one, max_offset=max_offset, view=True)
    got = await log.read(offset, max_bytes, min_one=min_one, max_offset=max_offset, region=True)
    return bytes(expected), got


batches_strategy = st.lists(st.tuples(st.integers(1, 12), st.integers(1, 1500)), min_size=1, max_size=40)
reads_strategy = st.lists(st.tuples(st.integers(0, 300), st.integers(-1, 40_000), st.booleans(),
                                    st.none() | st.integers(0, 300)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=batches_strategy, reads=reads_strategy, interval=st.sampled_from(["64", "256", "4096"]),
       segment_bytes=st.sampled_from(["8192", "65536", "1048576"]))
def test_a_region_holds_the_bytes_the_read_returns(tmp_path_factory, batches, reads, interval, segment_bytes):
    directory = tmp_path_factory.mktemp("region") / "t-0"
    config = LogConfig.from_topic_configs({"segment.bytes": segment_bytes, "index.interval.bytes": interval})

    async def scenario() -> None:
        log = await PartitionLog.open(directory, config, FsyncPolicy.NEVER)
        for i, (records, size) in enumerate(batches):
            await log.append(batch(records, size, i))
        before = open_fds(0)
        with mock.patch.object(segment_reads, "REGION_MIN", 0):
            for offset, max_bytes, min_one, max_offset in reads:
                expected, got = await both_reads(log, offset, max_bytes, min_one, max_offset)
                assert bytes(got) == expected, (offset, max_bytes, min_one, max_offset)
                if type(got) is FileRegion:
                    headers = [header for _, header in iter_batches(expected, verify=True)]
                    assert got.next_offset == headers[-1].next_offset
                    got.close()
        del got
        assert open_fds(0) == before
        await log.close()

    asyncio.run(scenario())


async def test_large_answers_are_regions_and_small_ones_bytes(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20, index_interval_bytes=4096))
    for i in range(40):
        await log.append(batch(10, 1000, i))
    small = await log.read(0, 20_000, region=True)
    assert type(small) is not FileRegion and len(small) < segment_reads.REGION_MIN
    large = await log.read(0, 300_000, region=True)
    assert type(large) is FileRegion
    assert bytes(large) == bytes(await log.read(0, 300_000, view=True))
    large.close()


async def test_a_segment_deleted_meanwhile_stays_readable_through_its_region(open_log):
    log = await open_log(small_config(segment_bytes=200_000, index_interval_bytes=4096))
    for i in range(40):
        await log.append(batch(10, 1000, i))
    first = log.segments[0]
    expected = bytes(await log.read(0, 150_000, view=True))
    before = open_fds()
    region = await log.read(0, 150_000, region=True)
    assert type(region) is FileRegion and open_fds() == before + 1
    await log.delete_segments([first], "retention")  # (closes the file pool's descriptor of it)
    assert not first.log_path.exists()
    deleted = open_fds()
    assert bytes(region) == expected  # the dup'd descriptor still reads the unlinked file
    region.close()
    region.close()  # idempotent
    assert open_fds() == deleted - 1


async def test_a_dropped_region_closes_its_descriptor(open_log):
    log = await open_log(small_config(segment_bytes=1 << 20, index_interval_bytes=4096))
    for i in range(40):
        await log.append(batch(10, 1000, i))
    before = open_fds()
    region = await log.read(0, 300_000, region=True)
    assert open_fds() == before + 1
    del region
    await asyncio.sleep(0)  # (the step that awaited the read still holds its future, and so the region)
    assert open_fds() == before


async def test_unchecked_batches_are_read_and_checked_rather_than_handed_out_as_a_region(tmp_path):
    """After a clean shutdown recovery trusts the segment unread: the first fetch reads and checks it (a flipped
    byte is refused as today), and only checked bytes are later served as regions."""
    config = LogConfig.from_topic_configs({"index.interval.bytes": "4096"})
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, config)
    log = await manager.get_or_create("state", 0)
    for i in range(40):
        await log.append(batch(10, 1000, i))
    await manager.close()

    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, config)
    log = (await manager.open_existing())[("state", 0)]
    assert log.segments[0].verified_end == 0
    first = await log.read(0, 300_000, region=True)
    assert type(first) is not FileRegion  # read and checked
    again = await log.read(0, 300_000, region=True)
    assert type(again) is FileRegion and bytes(again) == bytes(first)
    again.close()
    await manager.close()

    segment = next((tmp_path / "state-0").glob("*.log"))
    data = bytearray(segment.read_bytes())
    data[200_000] ^= 0x01
    segment.write_bytes(bytes(data))
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, config)
    log = (await manager.open_existing())[("state", 0)]
    with pytest.raises(CorruptLogError, match="CRC-32C mismatch"):
        await log.read(0, 300_000, region=True)
    await manager.close()


def expected_read(segment_files: list[bytes], offset: int, max_bytes: int, min_one: bool, below: int) -> bytes:
    """What a read answers, from the segments' whole bytes: in the first segment holding a batch that ends at or
    after ``offset``, the batches from that one on, below ``below`` (the high watermark or the stable offset),
    whole, at most ``max_bytes`` together, or the first alone with ``min_one``."""
    for data in segment_files:
        batches = [(pos, header) for pos, header in iter_batches(data, verify=False)
                   if header.last_offset >= offset]
        if not batches:
            continue
        first = batches[0][0]
        if batches[0][1].base_offset >= below:
            return b""
        end = first
        for pos, header in batches:
            if header.base_offset >= below or pos + header.size - first > max(max_bytes, 0):
                break
            end = pos + header.size
        if end == first and min_one:
            end = first + batches[0][1].size
        return data[first:end]
    return b""


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=batches_strategy, reads=reads_strategy, interval=st.sampled_from(["64", "256", "4096"]),
       segment_bytes=st.sampled_from(["8192", "65536"]), window=st.sampled_from([(61, 61), (64, 200), (4096, 65536)]),
       region_min=st.sampled_from([0, segment_reads.REGION_MIN]))
def test_reads_through_a_window_answer_the_batches_the_segment_files_hold(tmp_path_factory, batches, reads, interval,
                                                                          segment_bytes, window, region_min):
    """Both readers, with windows from one header's size up (every header a read of its own, refills mid-walk) and
    answers as regions or bytes, answer exactly the batches a walk of the segment files' whole bytes finds."""
    directory = tmp_path_factory.mktemp("window") / "t-0"
    config = LogConfig.from_topic_configs({"segment.bytes": segment_bytes, "index.interval.bytes": interval})

    async def scenario() -> None:
        log = await PartitionLog.open(directory, config, FsyncPolicy.NEVER)
        for i, (records, size) in enumerate(batches):
            await log.append(batch(records, size, i))
        files = [segment.log_path.read_bytes() for segment in log.segments]
        with mock.patch.object(segment_reads, "WINDOW_MIN", window[0]), \
                mock.patch.object(segment_reads, "WINDOW_MAX", window[1]), \
                mock.patch.object(segment_reads, "REGION_MIN", region_min):
            for offset, max_bytes, min_one, max_offset in reads:
                below = log.high_watermark if max_offset is None else min(log.high_watermark, max_offset)
                expected = b"" if offset >= below else expected_read(files, offset, max_bytes, min_one, below)
                for region in (False, True):
                    got = await log.read(offset, max_bytes, min_one=min_one, max_offset=max_offset, view=True,
                                         region=region)
                    assert bytes(got) == expected, (offset, max_bytes, min_one, max_offset, region)
                    if type(got) is FileRegion:
                        got.close()
        await log.close()

    asyncio.run(scenario())


async def test_a_read_near_the_log_end_reads_the_segment_once(open_log):
    """A consumer at the log end (TestGroupETL's): the batch located from the index, the headers walked to the
    bounds and the answer's bytes all come from one pread of the segment's tail, not one per header."""
    log = await open_log(small_config(segment_bytes=1 << 20, index_interval_bytes=4096))
    for i in range(200):
        await log.append(batch(20, 70, i))
    offset = log.high_watermark - 3 * 20
    expected = bytes(await log.read(offset, 1 << 20, view=True))
    reads = []
    real_pread = os.pread

    def counting_pread(fd, size, position):
        reads.append((size, position))
        return real_pread(fd, size, position)

    for region in (False, True):
        reads.clear()
        with mock.patch.object(os, "pread", counting_pread):
            got = await log.read(offset, 1 << 20, view=True, region=region)
        assert bytes(got) == expected and len(expected) > 0
        assert len(reads) == 1, reads
