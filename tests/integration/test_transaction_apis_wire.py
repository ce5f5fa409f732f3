"""The transaction APIs a broker (not a producer) sends, over the wire against an embedded broker:
WriteTxnMarkers routes a ``__consumer_offsets`` partition to the group coordinator (settling the pending
TxnOffsetCommit) and answers UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist; the batched
AddPartitionsToTxn (v4+) adds several transactions' partitions in one request."""

from __future__ import annotations

import pytest
from kio.index import load_payload_module
from kio.static.constants import EntityType

from groupcoord.coordinator.groups.hashing import partition_for
from tests.conformance.transactions import requests as tq
from tests.conformance.transactions.session import TxnSession

pytestmark = pytest.mark.timeout(60)


def write_txn_markers(producer_id: int, epoch: int, committed: bool, partitions: dict[str, tuple[int, ...]]):
    m = load_payload_module(27, 1, EntityType.request)
    return m.WriteTxnMarkersRequest(markers=(m.WritableTxnMarker(
        producer_id=producer_id, producer_epoch=epoch, transaction_result=committed, coordinator_epoch=0,
        topics=tuple(m.WritableTxnMarkerTopic(name=t, partition_indexes=ps) for t, ps in partitions.items())),))


def batched_add(transactions: list[tuple[str, int, int, dict[str, tuple[int, ...]]]]):
    m = tq.schema(tq.TxnApi.ADD_PARTITIONS_TO_TXN, 5)
    return m.AddPartitionsToTxnRequest(transactions=tuple(m.AddPartitionsToTxnTransaction(
        transactional_id=tid, producer_id=pid, producer_epoch=epoch, verify_only=False,
        topics=tuple(m.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in parts.items()))
        for tid, pid, epoch, parts in transactions))


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
async def test_write_txn_markers_settles_a_transactional_offset_commit(groupcoord_broker):
    async with TxnSession(groupcoord_broker.bootstrap_servers) as s:
        topic = await s.topic("orders", 1)
        group = await s.group("g")
        p = await s.producer("P")
        await s.init("init", p)
        await s.add_offsets("add offsets", p, group)
        await s.txn_offset_commit("txn commit", p, group, {(topic, 0): 12})
        offsets = ("__consumer_offsets", (partition_for(group, 50),))
        answer = await s.admin(write_txn_markers(p.producer_id, p.epoch, True, dict([offsets, ("missing-topic", (0,))])))
        errors = {(t.name, int(q.partition_index)): int(q.error_code) for m in answer.markers for t in m.topics
                  for q in t.partitions}
        assert errors == {("__consumer_offsets", offsets[1][0]): 0, ("missing-topic", 0): 3}
        await s.fetch_offsets_stable("fetch", group, {topic: (0,)})
        assert s.transcript.steps[-1]["offsets"] == [["orders", 0, 12, "NONE"]]


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
async def test_batched_add_partitions_adds_each_transactions_partitions(groupcoord_broker):
    async with TxnSession(groupcoord_broker.bootstrap_servers) as s:
        topic = await s.topic("orders", 2)
        a, b = await s.producer("A"), await s.producer("B")
        await s.init("init A", a)
        await s.init("init B", b)
        answer = await s.admin(batched_add([(a.transactional_id, a.producer_id, a.epoch, {topic: (0,)}),
                                            (b.transactional_id, b.producer_id, b.epoch + 1, {topic: (1,)})]))
        results = {s.transcript.alias(r.transactional_id): [int(q.partition_error_code) for t in r.topic_results
                                                            for q in t.results_by_partition]
                   for r in answer.results_by_transaction}
        assert results == {"A": [0], "B": [90]}  # B's epoch is not its current one: PRODUCER_FENCED
        await s.describe_txn("describe", a, b)
        rows = {r["transactional_id"]: (r["state"], r["topics"]) for r in s.transcript.steps[-1]["transactions"]}
        assert rows == {"A": ("Ongoing", [["orders", [0]]]), "B": ("Empty", [])}
