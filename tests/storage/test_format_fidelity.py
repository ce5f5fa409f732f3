"""Our segment files are Kafka's: other readers parse them and the indexes point where Kafka's would."""

import struct

from crc32c import crc32c
from kio.records.readers import read_batch

from groupcoord.protocol.record_batch import encode_batch
from tests.storage.conftest import small_config


async def test_segments_read_back_with_kio_and_independent_crc_checks(open_log, log_dir):
    log = await open_log(small_config(segment_bytes=4096, index_interval_bytes=300))
    for i in range(80):
        await log.append(encode_batch([(b"k%d" % i, b"value-%d" % i, [("h", b"x")]), (None, b"second", ())],
                                      base_timestamp=1_700_000_000_000 + i))
    await log.close()
    offsets = []
    for segment in sorted(log_dir.glob("*.log")):
        data = segment.read_bytes()
        first_in_segment = len(offsets)
        pos = 0
        while pos < len(data):
            batch, size = read_batch(data, pos)
            stored_crc = struct.unpack_from(">I", data, pos + 17)[0]
            assert stored_crc == crc32c(data[pos + 21:pos + size])
            offsets.extend(record.offset for record in batch.records)
            pos += size
        assert int(segment.stem) == offsets[first_in_segment], "segments are named by their base offset"
    assert offsets == list(range(160))


async def test_index_entries_point_at_batch_starts_with_their_last_offsets(open_log, log_dir):
    log = await open_log(small_config(segment_bytes=8192, index_interval_bytes=300))
    for i in range(100):
        await log.append(encode_batch([(b"k", b"v" * 30, ())] * 2, base_timestamp=5_000 + i))
    await log.close()
    checked = 0
    for index_path in sorted(log_dir.glob("*.index")):
        base = int(index_path.stem)
        data = (log_dir / f"{index_path.stem}.log").read_bytes()
        entries = list(struct.iter_unpack(">ii", index_path.read_bytes()))
        assert entries, "each full segment gets sparse entries"
        for relative, position in entries:
            batch_base, = struct.unpack_from(">q", data, position)
            last_delta, = struct.unpack_from(">i", data, position + 23)
            assert batch_base + last_delta == base + relative
            checked += 1
        times = list(struct.iter_unpack(">qi", (log_dir / f"{index_path.stem}.timeindex").read_bytes()))
        assert [t for t, _ in times] == sorted({t for t, _ in times})
        assert all(0 <= relative < 10_000 for _, relative in times)
    assert checked > 10
