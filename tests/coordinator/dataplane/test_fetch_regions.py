"""A fetch answered with file regions (a connection that sends them with sendfile) answers exactly as one
answered with the bytes read: the records, the offsets, and at read_committed the aborted transactions, which a
region lists from where its batches end rather than from reading them."""
import dataclasses
from unittest import mock

from groupcoord.protocol.file_region import FileRegion
from groupcoord.storage import segment_reads

from groupcoord.coordinator.dataplane.txn_markers import TxnMarker

from .txn_support import READ_COMMITTED, READ_UNCOMMITTED, fetch_request, produce, txn_batch

PID, OTHER, PLAIN = 7000, 7001, 7002


def with_limits(request, max_bytes, partition_max_bytes):
    [topic] = request.topics
    [part] = topic.partitions
    topic = dataclasses.replace(topic, partitions=(dataclasses.replace(part, partition_max_bytes=partition_max_bytes),))
    return dataclasses.replace(request, max_bytes=max_bytes, topics=(topic,))


def as_read(response):
    """The response with each region replaced by its bytes (and closed): what the wire carries."""
    regions = 0
    for topic in response["responses"]:
        for part in topic["partitions"]:
            if type(part["records"]) is FileRegion:
                regions += 1
                region = part["records"]
                part["records"] = bytes(region)
                region.close()
    return response, regions


async def test_committed_and_uncommitted_fetches_answer_the_same_with_regions(dataplane):
    await dataplane.topics.create("t", 1)
    for round_ in range(6):  # aborted and committed transactions between plain batches
        await produce(dataplane, txn_batch(PLAIN, round_ * 10, n=3, transactional=False), txn_id=None)
        await produce(dataplane, txn_batch(PID, round_ * 10, n=4))
        await produce(dataplane, txn_batch(OTHER, round_ * 10, n=2, value=b"x" * 300))
        await dataplane.write_txn_markers([TxnMarker(PID, 0, 1, round_ % 2 == 0, [("t", 0)])])
        await dataplane.write_txn_markers([TxnMarker(OTHER, 0, 1, round_ % 3 == 0, [("t", 0)])])
    await produce(dataplane, txn_batch(PID, 100, n=2))  # left open: the last stable offset stops before it
    end = dataplane.topics.log("t", 0).high_watermark
    seen_regions = 0
    with mock.patch.object(segment_reads, "REGION_MIN", 0):
        for isolation in (READ_COMMITTED, READ_UNCOMMITTED):
            for offset in range(0, end + 1, 3):
                for max_bytes in (1, 200, 700, 1 << 20):
                    request = with_limits(fetch_request(offset, isolation=isolation), 1 << 20, max_bytes)
                    expected = await dataplane.fetch.fetch(request)
                    got, regions = as_read(await dataplane.fetch.fetch(request, regions=True))
                    assert got == expected, (isolation, offset, max_bytes)
                    seen_regions += regions
    assert seen_regions > 20
