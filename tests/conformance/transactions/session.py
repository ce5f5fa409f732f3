"""A transaction session: the data-plane session plus recorded transaction calls.

What is recorded is what a transactional producer, a read_committed consumer and an operator observe:
error names, epochs (deterministic: 0 for a new transactional id), transaction states and timeouts, the
partitions of a transaction (topic labels; the group's ``__consumer_offsets`` partition as "offsets of
<group>", since its number depends on the run-unique group id), the records a read_committed fetch
returns, its last stable offset and its aborted transactions (by producer label). Producer ids, start
times and coordinator addresses are broker choices, recorded only as "given".

Waiting is never recorded: finding the transaction coordinator, a marker landing (Kafka writes markers
after EndTxn answers, so an observer waits until the transaction is complete), a timed-out transaction
being aborted.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

from groupcoord.coordinator.admin.transactions import read_describe_transactions
from groupcoord.protocol.record_batch import decode_records, iter_batches

from tests.conformance.dataplane.session import DataSession
from tests.conformance.session import POLL_INTERVAL_S, SETTLE_TIMEOUT_S, ScenarioError
from tests.conformance.transactions import requests as tq
from tests.conformance.transcript import error_name

OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_TIMEOUT_MS = 60_000
_NOT_READY = frozenset({ErrorCode.coordinator_load_in_progress, ErrorCode.coordinator_not_available,
                        ErrorCode.not_coordinator})


@dataclass
class Txn:
    """One transactional producer: its id, label, and the producer id and epoch it was last given."""

    label: str
    transactional_id: str
    producer_id: int = -1
    epoch: int = -1
    sequences: dict[tuple[str, int], int] = field(default_factory=dict)


class NoHooks:
    """Points where a test may act on the broker mid-scenario (groupcoord's restart test); no-ops here."""

    async def before_end_txn(self, session: "TxnSession") -> None: ...

    async def after_end_txn(self, session: "TxnSession") -> None: ...


@dataclass
class TxnSession(DataSession):
    txns: dict[str, Txn] = field(default_factory=dict)
    groups_by_id: dict[str, str] = field(default_factory=dict)
    hooks: NoHooks = field(default_factory=NoHooks)

    async def reconnect(self) -> None:
        """After a broker restart: drop every connection; the next call opens a new one."""
        for connection in self._connections:
            await connection.close()
        self._connections.clear()
        self._admin = None

    # ------------------------------------------------------------------ producers

    async def producer(self, label: str) -> Txn:
        """A transactional id, its coordinator found (unrecorded, retried while it loads)."""
        txn = Txn(label, self.name("txn", label))
        self.txns[txn.transactional_id] = txn
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            found = (await self.admin(tq.find_coordinator(txn.transactional_id))).coordinators[0]
            if found.error_code == ErrorCode.none:
                return txn
            if time.monotonic() > deadline:
                raise ScenarioError(f"FindCoordinator(TRANSACTION) answered {error_name(found.error_code)}")
            await asyncio.sleep(POLL_INTERVAL_S)

    def pid_label(self, producer_id: int) -> str:
        for txn in self.txns.values():
            if txn.producer_id == producer_id and producer_id >= 0:
                return txn.label
        return "<unknown producer>"

    async def init(self, step: str, txn: Txn, *, timeout_ms: int = DEFAULT_TIMEOUT_MS, recover: bool = False,
                   retry_concurrent: bool = False) -> Any:
        """InitProducerId; retried, unrecorded, while the coordinator loads (and, with ``retry_concurrent``,
        while an earlier transaction is being aborted, as the Java producer retries CONCURRENT_TRANSACTIONS)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        retriable = _NOT_READY | ({ErrorCode.concurrent_transactions} if retry_concurrent else frozenset())
        while True:
            request = tq.init_producer_id(txn.transactional_id, timeout_ms,
                                          *((txn.producer_id, txn.epoch) if recover else ()))
            response = await self.admin(request)
            if response.error_code not in retriable:
                break
            if time.monotonic() > deadline:
                raise ScenarioError(f"InitProducerId still answered {error_name(response.error_code)}")
            await asyncio.sleep(POLL_INTERVAL_S)
        if response.error_code == ErrorCode.none:
            if txn.producer_id >= 0 and int(response.producer_id) != txn.producer_id:
                same = False
            else:
                same = True
            txn.producer_id, txn.epoch = int(response.producer_id), int(response.producer_epoch)
            txn.sequences.clear()
            self.transcript.record(step, error="NONE", epoch=txn.epoch, same_producer_id=same)
        else:
            self.transcript.record(step, error=error_name(response.error_code),
                                   producer_id=int(response.producer_id), epoch=int(response.producer_epoch))
        return response

    def _as(self, txn: Txn, epoch: int | None, producer_id: int | None) -> tuple[int, int]:
        return (txn.producer_id if producer_id is None else producer_id), (txn.epoch if epoch is None else epoch)

    async def add_partitions(self, step: str, txn: Txn, partitions: dict[str, tuple[int, ...]], *,
                             epoch: int | None = None, producer_id: int | None = None,
                             transactional_id: str | None = None) -> None:
        pid, ep = self._as(txn, epoch, producer_id)
        response = await self.admin(tq.add_partitions(transactional_id or txn.transactional_id, pid, ep, partitions))
        t = self.transcript
        t.record(step, partitions=sorted(
            [t.alias(r.name), int(p.partition_index), error_name(p.partition_error_code)]
            for r in response.results_by_topic_v3_and_below for p in r.results_by_partition))

    async def verify(self, step: str, txn: Txn, partitions: dict[str, tuple[int, ...]]) -> None:
        response = await self.admin(tq.verify_partitions(txn.transactional_id, txn.producer_id, txn.epoch, partitions))
        t = self.transcript
        t.record(step, error=error_name(response.error_code), partitions=sorted(
            [t.alias(r.name), int(p.partition_index), error_name(p.partition_error_code)]
            for tx in response.results_by_transaction for r in tx.topic_results for p in r.results_by_partition))

    async def add_offsets(self, step: str, txn: Txn, group_id: str, *, epoch: int | None = None) -> None:
        pid, ep = self._as(txn, epoch, None)
        response = await self.admin(tq.add_offsets(txn.transactional_id, pid, ep, group_id))
        self.groups_by_id[group_id] = self.transcript.alias(group_id)
        self.transcript.record(step, error=error_name(response.error_code))

    async def end(self, step: str, txn: Txn, commit: bool, *, epoch: int | None = None,
                  producer_id: int | None = None, transactional_id: str | None = None) -> ErrorCode:
        pid, ep = self._as(txn, epoch, producer_id)
        response = await self.admin(tq.end_txn(transactional_id or txn.transactional_id, pid, ep, commit))
        self.transcript.record(step, error=error_name(response.error_code))
        return response.error_code

    async def txn_offset_commit(self, step: str, txn: Txn, group_id: str, offsets: dict[tuple[str, int], int], *,
                                epoch: int | None = None, **member: Any) -> None:
        response = await self.admin(tq.txn_offset_commit(txn.transactional_id, group_id, txn.producer_id,
                                                         txn.epoch if epoch is None else epoch, offsets, **member))
        t = self.transcript
        t.record(step, partitions=sorted([t.alias(r.name), int(p.partition_index), error_name(p.error_code)]
                                         for r in response.topics for p in r.partitions))

    async def produce_txn(self, step: str, txn: Txn, topic: str, partition: int, *values: str,
                          epoch: int | None = None) -> None:
        """A transactional batch (sequence numbers continue per partition, as the producer keeps them)."""
        sequence = txn.sequences.get((topic, partition), 0)
        ep = txn.epoch if epoch is None else epoch
        batch = tq.transactional_batch([v.encode() for v in values], txn.producer_id, ep, sequence, self.at(0))
        response = await self.admin(tq.produce(txn.transactional_id, {(topic, partition): batch}))
        p = response.responses[0].partition_responses[0]
        if p.error_code == ErrorCode.none:
            txn.sequences[(topic, partition)] = sequence + len(values)
        self.transcript.record(step, error=error_name(p.error_code), base_offset=int(p.base_offset))

    # ------------------------------------------------------------------ observers

    def _partitions_fact(self, topics: list[tuple[str, list[int]]]) -> list:
        out = []
        for name, partitions in topics:
            if name == OFFSETS_TOPIC:
                out.append(["__consumer_offsets", len(partitions)])
            else:
                out.append([self.transcript.alias(name), sorted(partitions)])
        return sorted(out)

    async def describe_txn(self, step: str, *txns: Txn, unknown: tuple[str, ...] = ()) -> None:
        ids = [t.transactional_id for t in txns] + [self.name("txn", u) for u in unknown]
        t = self.transcript
        rows = []
        for state in await self.describe_raw(*ids):
            row = {"transactional_id": t.alias(state["transactional_id"]), "error": error_name(state["error_code"])}
            if state["error_code"] == ErrorCode.none:
                row.update(state=state["state"], epoch=state["producer_epoch"], timeout_ms=state["timeout_ms"],
                           producer=self.pid_label(state["producer_id"]), started=state["start_time"] >= 0,
                           topics=self._partitions_fact(state["topics"]))
            rows.append(row)
        t.record(step, transactions=rows)

    async def describe_raw(self, *transactional_ids: str) -> list[dict]:
        if self._admin is None:
            self._admin = await self.connect()
        return read_describe_transactions(await self._admin.send_for_payload(
            tq.describe_transactions(*transactional_ids)))

    async def list_txns(self, step: str, states: tuple[str, ...] = (), producers: tuple[Txn, ...] = (),
                        duration_ms: int = -1) -> None:
        """Only this session's transactional ids are recorded (a shared reference broker holds others)."""
        response = await self.admin(tq.list_transactions(states, [p.producer_id for p in producers], duration_ms))
        t = self.transcript
        ours = sorted([t.alias(s.transactional_id), s.transaction_state, self.pid_label(int(s.producer_id))]
                      for s in response.transaction_states if s.transactional_id in self.txns)
        t.record(step, error=error_name(response.error_code), unknown_state_filters=sorted(response.unknown_state_filters),
                 transactions=ours)

    async def fetch_offsets_stable(self, step: str, group_id: str, partitions: dict[str, tuple[int, ...]],
                                   require_stable: bool = True) -> None:
        response = await self.admin(tq.offset_fetch(group_id, partitions, require_stable))
        group = response.groups[0]
        t = self.transcript
        t.record(step, error=error_name(group.error_code), offsets=sorted(
            [t.alias(topic.name), int(p.partition_index), int(p.committed_offset), error_name(p.error_code)]
            for topic in group.topics for p in topic.partitions))

    async def read(self, step: str, partitions: dict[tuple[str, int], int], *, committed: bool = True) -> None:
        isolation = tq.READ_COMMITTED if committed else 0
        response = await self.admin(tq.fetch({(self._topic_id(topic), p): o for (topic, p), o in partitions.items()},
                                             isolation))
        rows = []
        for topic in response.responses:
            for p in topic.partitions:
                records, control = [], 0
                for pos, header in iter_batches(p.records or b""):
                    if header.is_control:
                        control += 1
                        continue
                    records.extend([r.offset, r.value.decode() if r.value else None]
                                   for r in decode_records(p.records, pos, header))
                aborted = sorted([self.pid_label(int(a.producer_id)), int(a.first_offset)]
                                 for a in (p.aborted_transactions or ()))
                rows.append([self.topic_label(topic.topic_id), int(p.partition_index), error_name(p.error_code),
                             int(p.high_watermark), int(p.last_stable_offset), records, control,
                             aborted if committed else None])
        self.transcript.record(step, error=error_name(response.error_code), partitions=sorted(rows))

    async def latest(self, step: str, topic: str, partitions: tuple[int, ...], *, committed: bool = True) -> None:
        isolation = tq.READ_COMMITTED if committed else 0
        response = await self.admin(tq.list_offsets(topic, {p: -1 for p in partitions}, isolation))
        t = self.transcript
        t.record(step, partitions=sorted([t.alias(tp.name), int(p.partition_index), error_name(p.error_code),
                                          int(p.offset)] for tp in response.topics for p in tp.partitions))

    # ------------------------------------------------------------------ waiting (unrecorded)

    async def wait_for_state(self, txn: Txn, *states: str, timeout_s: float = SETTLE_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            state = (await self.describe_raw(txn.transactional_id))[0]
            if state["state"] in states:
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"{txn.label} stayed {state['state']}, never {states}")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def wait_until_stable(self, group_id: str, partitions: dict[str, tuple[int, ...]]) -> None:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            group = (await self.admin(tq.offset_fetch(group_id, partitions, True))).groups[0]
            if all(p.error_code != ErrorCode.unstable_offset_commit for t in group.topics for p in t.partitions):
                return
            if time.monotonic() > deadline:
                raise ScenarioError("offsets stayed UNSTABLE_OFFSET_COMMIT")
            await asyncio.sleep(POLL_INTERVAL_S)
