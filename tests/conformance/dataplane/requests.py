"""Data-plane request builders at pinned versions, and the record batches they carry.

Each version is the highest that both groupcoord and Kafka 4.3.1 serve (checked against both brokers'
ApiVersions): Produce 11, Fetch 17, ListOffsets 10, Metadata 12, CreateTopics 7, DeleteTopics 6,
InitProducerId 5, CreatePartitions 3. A 4.3 Java client would send Produce 13, Fetch 18 and ListOffsets 11 to
Kafka, but negotiates down to these against groupcoord, so these are the versions its clients really speak.
Pinning, not negotiating, means both brokers are asked exactly the same bytes.

Batches are built with protocol/record_batch.py's encoder (valid v2, CRC32C; Kafka verifies the CRC on
append) and read back with its decoder. The same decoder reads Kafka's answers, so a groupcoord log that
stored or served different bytes shows up as a transcript difference rather than being mirrored away.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import IntEnum
from types import ModuleType

from kio.index import load_payload_module
from kio.static.constants import EntityType

from groupcoord.protocol.record_batch import decode_records, encode_batch, iter_batches


class DataApi(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    INIT_PRODUCER_ID = 22
    CREATE_PARTITIONS = 37


VERSIONS: dict[DataApi, int] = {
    DataApi.PRODUCE: 11,
    DataApi.FETCH: 17,
    DataApi.LIST_OFFSETS: 10,
    DataApi.METADATA: 12,
    DataApi.CREATE_TOPICS: 7,
    DataApi.DELETE_TOPICS: 6,
    DataApi.INIT_PRODUCER_ID: 5,
    DataApi.CREATE_PARTITIONS: 3,
}

REQUEST_TIMEOUT_MS = 30000
TRANSACTION_TIMEOUT_MS = 60000   # the Java producer's transaction.timeout.ms default, sent even when idempotent
PARTITION_MAX_BYTES = 1048576    # the Java consumer's max.partition.fetch.bytes default
FETCH_MAX_BYTES = 52428800       # fetch.max.bytes default
CONSUMER_REPLICA_ID = -1
READ_UNCOMMITTED = 0

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3

FULL_FETCH_EPOCH = 0      # with session id 0: open a new fetch session
FINAL_EPOCH = -1          # closes the session named by the request (or asks for none)


def schema(api: DataApi) -> ModuleType:
    return load_payload_module(int(api), VERSIONS[api], EntityType.request)


@dataclass(frozen=True)
class Producer:
    """The idempotence fields a batch carries; NO_PRODUCER is a plain (non-idempotent) producer."""

    producer_id: int = -1
    epoch: int = -1
    base_sequence: int = -1


NO_PRODUCER = Producer()


def batch(values: Sequence[bytes], *, timestamps: Sequence[int] | None = None, producer: Producer = NO_PRODUCER,
          keys: Sequence[bytes | None] | None = None) -> bytes:
    """One v2 batch of CreateTime records, as a producer sends it: base offset 0, leader epoch -1."""
    keys = keys or [None] * len(values)
    return encode_batch([(key, value, ()) for key, value in zip(keys, values)], timestamps=timestamps,
                        producer_id=producer.producer_id, producer_epoch=producer.epoch,
                        base_sequence=producer.base_sequence)


def read_records(records: bytes | None) -> list[list]:
    """[offset, key, value, timestamp] of every whole record, in log order; keys and values as text."""
    if not records:
        return []
    read = []
    for pos, header in iter_batches(records):
        for record in decode_records(records, pos, header):
            read.append([record.offset, _text(record.key), _text(record.value), record.timestamp])
    return read


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode()


def produce(acks: int, partitions: dict[tuple[str, int], bytes], transactional_id: str | None = None):
    m = schema(DataApi.PRODUCE)
    topics: dict[str, list] = {}
    for (topic, partition), records in partitions.items():
        topics.setdefault(topic, []).append(m.PartitionProduceData(index=partition, records=records))
    return m.ProduceRequest(transactional_id=transactional_id, acks=acks,
                            timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS),
                            topic_data=tuple(m.TopicProduceData(name=t, partition_data=tuple(ps))
                                             for t, ps in topics.items()))


def fetch(partitions: dict[tuple[uuid.UUID, int], int], *, session_id: int = 0, session_epoch: int = FINAL_EPOCH,
          forgotten: dict[uuid.UUID, tuple[int, ...]] | None = None, max_wait_ms: int = 0, min_bytes: int = 1):
    """A consumer's fetch (replica id -1, read_uncommitted); the default epoch asks for no session."""
    m = schema(DataApi.FETCH)
    topics: dict[uuid.UUID, list] = {}
    for (topic_id, partition), offset in partitions.items():
        topics.setdefault(topic_id, []).append(m.FetchPartition(
            partition=partition, fetch_offset=offset, partition_max_bytes=PARTITION_MAX_BYTES))
    return m.FetchRequest(
        max_wait=timedelta(milliseconds=max_wait_ms), min_bytes=min_bytes, max_bytes=FETCH_MAX_BYTES,
        isolation_level=READ_UNCOMMITTED, session_id=session_id, session_epoch=session_epoch,
        topics=tuple(m.FetchTopic(topic_id=t, partitions=tuple(ps)) for t, ps in topics.items()),
        forgotten_topics_data=tuple(m.ForgottenTopic(topic_id=t, partitions=ps)
                                    for t, ps in (forgotten or {}).items()))


def list_offsets(topic: str, timestamps: dict[int, int]):
    m = schema(DataApi.LIST_OFFSETS)
    return m.ListOffsetsRequest(
        replica_id=CONSUMER_REPLICA_ID, isolation_level=READ_UNCOMMITTED,
        topics=(m.ListOffsetsTopic(name=topic, partitions=tuple(
            m.ListOffsetsPartition(partition_index=p, timestamp=ts) for p, ts in timestamps.items())),),
        timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS))


def metadata(*topics: str):
    m = schema(DataApi.METADATA)
    return m.MetadataRequest(topics=tuple(m.MetadataRequestTopic(topic_id=None, name=t) for t in topics),
                             allow_auto_topic_creation=False, include_topic_authorized_operations=False)


def create_topics(name: str, partitions: int, *, replication_factor: int = 1,
                  configs: dict[str, str | None] | None = None, validate_only: bool = False):
    m = schema(DataApi.CREATE_TOPICS)
    return m.CreateTopicsRequest(
        topics=(m.CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication_factor,
                                 assignments=(), configs=tuple(m.CreatableTopicConfig(name=k, value=v)
                                                               for k, v in (configs or {}).items())),),
        timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS), validate_only=validate_only)


def delete_topics(*names: str):
    m = schema(DataApi.DELETE_TOPICS)
    return m.DeleteTopicsRequest(topics=tuple(m.DeleteTopicState(name=n, topic_id=uuid.UUID(int=0)) for n in names),
                                 timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS))


def create_partitions(name: str, count: int, validate_only: bool = False):
    m = schema(DataApi.CREATE_PARTITIONS)
    return m.CreatePartitionsRequest(topics=(m.CreatePartitionsTopic(name=name, count=count, assignments=None),),
                                     timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS),
                                     validate_only=validate_only)


def init_producer_id():
    """What an idempotent (non-transactional) Java producer sends first."""
    m = schema(DataApi.INIT_PRODUCER_ID)
    return m.InitProducerIdRequest(transactional_id=None,
                                   transaction_timeout=timedelta(milliseconds=TRANSACTION_TIMEOUT_MS))
