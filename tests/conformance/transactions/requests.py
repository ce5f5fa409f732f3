"""Transaction request builders at pinned versions (the highest a Transactions V1 client speaks that both
groupcoord and Kafka 4.3.1 serve), and the transactional batches a producer sends.

InitProducerId 5, AddPartitionsToTxn 3 (a producer's form) and 5 (the brokers' batched form with
verify_only), AddOffsetsToTxn 4, EndTxn 4, TxnOffsetCommit 4, DescribeTransactions 0, ListTransactions 1,
FindCoordinator 4 (key type 1), and Fetch 17 / ListOffsets 10 at read_committed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from enum import IntEnum
from types import ModuleType

from kio.index import load_payload_module
from kio.static.constants import EntityType

from groupcoord.protocol.record_batch import encode_batch

from tests.conformance.dataplane.requests import FETCH_MAX_BYTES, PARTITION_MAX_BYTES, REQUEST_TIMEOUT_MS


class TxnApi(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    INIT_PRODUCER_ID = 22
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66


VERSIONS: dict[TxnApi, int] = {
    TxnApi.PRODUCE: 11,
    TxnApi.FETCH: 17,
    TxnApi.LIST_OFFSETS: 10,
    TxnApi.OFFSET_FETCH: 8,
    TxnApi.FIND_COORDINATOR: 4,
    TxnApi.INIT_PRODUCER_ID: 5,
    TxnApi.ADD_PARTITIONS_TO_TXN: 3,
    TxnApi.ADD_OFFSETS_TO_TXN: 4,
    TxnApi.END_TXN: 4,
    TxnApi.TXN_OFFSET_COMMIT: 4,
    TxnApi.DESCRIBE_TRANSACTIONS: 0,
    TxnApi.LIST_TRANSACTIONS: 1,
}
BROKER_ADD_PARTITIONS_VERSION = 5

KEY_TYPE_TRANSACTION = 1
READ_COMMITTED = 1
CONSUMER_REPLICA_ID = -1


def schema(api: TxnApi, version: int | None = None) -> ModuleType:
    return load_payload_module(int(api), VERSIONS[api] if version is None else version, EntityType.request)


def find_coordinator(transactional_id: str):
    m = schema(TxnApi.FIND_COORDINATOR)
    return m.FindCoordinatorRequest(key_type=KEY_TYPE_TRANSACTION, coordinator_keys=(transactional_id,))


def init_producer_id(transactional_id: str, timeout_ms: int, producer_id: int = -1, epoch: int = -1):
    m = schema(TxnApi.INIT_PRODUCER_ID)
    return m.InitProducerIdRequest(transactional_id=transactional_id,
                                   transaction_timeout=timedelta(milliseconds=timeout_ms),
                                   producer_id=producer_id, producer_epoch=epoch)


def add_partitions(transactional_id: str, producer_id: int, epoch: int, partitions: dict[str, tuple[int, ...]]):
    m = schema(TxnApi.ADD_PARTITIONS_TO_TXN)
    return m.AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id, v3_and_below_producer_id=producer_id,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=tuple(m.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in partitions.items()))


def verify_partitions(transactional_id: str, producer_id: int, epoch: int, partitions: dict[str, tuple[int, ...]]):
    m = schema(TxnApi.ADD_PARTITIONS_TO_TXN, BROKER_ADD_PARTITIONS_VERSION)
    return m.AddPartitionsToTxnRequest(transactions=(m.AddPartitionsToTxnTransaction(
        transactional_id=transactional_id, producer_id=producer_id, producer_epoch=epoch, verify_only=True,
        topics=tuple(m.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in partitions.items())),))


def add_offsets(transactional_id: str, producer_id: int, epoch: int, group_id: str):
    m = schema(TxnApi.ADD_OFFSETS_TO_TXN)
    return m.AddOffsetsToTxnRequest(transactional_id=transactional_id, producer_id=producer_id,
                                    producer_epoch=epoch, group_id=group_id)


def end_txn(transactional_id: str, producer_id: int, epoch: int, committed: bool):
    m = schema(TxnApi.END_TXN)
    return m.EndTxnRequest(transactional_id=transactional_id, producer_id=producer_id, producer_epoch=epoch,
                           committed=committed)


def txn_offset_commit(transactional_id: str, group_id: str, producer_id: int, epoch: int,
                      offsets: dict[tuple[str, int], int], *, generation: int = -1, member_id: str = "",
                      instance_id: str | None = None):
    m = schema(TxnApi.TXN_OFFSET_COMMIT)
    topics: dict[str, list] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(m.TxnOffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""))
    return m.TxnOffsetCommitRequest(
        transactional_id=transactional_id, group_id=group_id, producer_id=producer_id, producer_epoch=epoch,
        generation_id=generation, member_id=member_id, group_instance_id=instance_id,
        topics=tuple(m.TxnOffsetCommitRequestTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()))


def offset_fetch(group_id: str, partitions: dict[str, tuple[int, ...]], require_stable: bool):
    m = schema(TxnApi.OFFSET_FETCH)
    return m.OffsetFetchRequest(groups=(m.OffsetFetchRequestGroup(group_id=group_id, topics=tuple(
        m.OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in partitions.items())),),
        require_stable=require_stable)


def describe_transactions(*transactional_ids: str):
    m = schema(TxnApi.DESCRIBE_TRANSACTIONS)
    return m.DescribeTransactionsRequest(transactional_ids=transactional_ids)


def list_transactions(states: Sequence[str] = (), producer_ids: Sequence[int] = (), duration_ms: int = -1):
    m = schema(TxnApi.LIST_TRANSACTIONS)
    return m.ListTransactionsRequest(state_filters=tuple(states), producer_id_filters=tuple(producer_ids),
                                     duration_filter=duration_ms)


def transactional_batch(values: Sequence[bytes], producer_id: int, epoch: int, base_sequence: int,
                        timestamp: int) -> bytes:
    return encode_batch([(None, v, ()) for v in values], base_timestamp=timestamp, producer_id=producer_id,
                        producer_epoch=epoch, base_sequence=base_sequence, is_transactional=True)


def produce(transactional_id: str | None, partitions: dict[tuple[str, int], bytes]):
    m = schema(TxnApi.PRODUCE)
    topics: dict[str, list] = {}
    for (topic, partition), records in partitions.items():
        topics.setdefault(topic, []).append(m.PartitionProduceData(index=partition, records=records))
    return m.ProduceRequest(transactional_id=transactional_id, acks=-1,
                            timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS),
                            topic_data=tuple(m.TopicProduceData(name=t, partition_data=tuple(ps))
                                             for t, ps in topics.items()))


def fetch(partitions: dict[tuple[uuid.UUID, int], int], isolation_level: int):
    m = schema(TxnApi.FETCH)
    topics: dict[uuid.UUID, list] = {}
    for (topic_id, partition), offset in partitions.items():
        topics.setdefault(topic_id, []).append(m.FetchPartition(
            partition=partition, fetch_offset=offset, partition_max_bytes=PARTITION_MAX_BYTES))
    return m.FetchRequest(
        max_wait=timedelta(milliseconds=0), min_bytes=1, max_bytes=FETCH_MAX_BYTES, isolation_level=isolation_level,
        session_id=0, session_epoch=-1,
        topics=tuple(m.FetchTopic(topic_id=t, partitions=tuple(ps)) for t, ps in topics.items()),
        forgotten_topics_data=())


def list_offsets(topic: str, timestamps: dict[int, int], isolation_level: int):
    m = schema(TxnApi.LIST_OFFSETS)
    return m.ListOffsetsRequest(
        replica_id=CONSUMER_REPLICA_ID, isolation_level=isolation_level,
        topics=(m.ListOffsetsTopic(name=topic, partitions=tuple(
            m.ListOffsetsPartition(partition_index=p, timestamp=ts) for p, ts in timestamps.items())),),
        timeout=timedelta(milliseconds=REQUEST_TIMEOUT_MS))
