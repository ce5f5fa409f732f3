"""Helpers for the transaction tests: transactional batches, produce, fetch at an isolation level."""
from __future__ import annotations

from groupcoord.protocol.record_batch import decode_records, encode_batch, iter_batches

from tests.coordinator.dataplane.conftest import TEST_START_MS
from groupcoord.coordinator.dataplane.fetch import FetchPartition, FetchRequestData, FetchTopic
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData

SENT_AT = TEST_START_MS
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def txn_batch(pid, seq, n=2, *, epoch=0, value=b"v", transactional=True):
    return encode_batch([(b"k%d" % (seq + i), value, ()) for i in range(n)], producer_id=pid, producer_epoch=epoch,
                        base_sequence=seq, is_transactional=transactional, base_timestamp=SENT_AT)


async def produce(dataplane, records, *, topic="t", partition=0, txn_id="app-1"):
    response = await dataplane.produce.produce(
        acks=-1, api_version=9, topics=[TopicData(topic, (PartitionData(partition, records),))],
        transactional_id=txn_id)
    [part] = response["responses"][0]["partition_responses"]
    return part


def fetch_request(offset, *, isolation=READ_COMMITTED, topic="t", partition=0, max_wait_ms=0, min_bytes=1):
    return FetchRequestData(max_wait_ms, min_bytes, 1 << 20, isolation, 0,
                            (FetchTopic(topic, None, (FetchPartition(partition, offset, 1 << 20),)),))


async def fetch(dataplane, offset=0, **kwargs):
    response = await dataplane.fetch.fetch(fetch_request(offset, **kwargs))
    return response["responses"][0]["partitions"][0]


def batches(records):
    return [header for _pos, header in iter_batches(records)]


def values(records):
    """Data records (control batches left out), as (offset, key)."""
    return [(r.offset, r.key) for pos, h in iter_batches(records) if not h.is_control
            for r in decode_records(records, pos, h)]
