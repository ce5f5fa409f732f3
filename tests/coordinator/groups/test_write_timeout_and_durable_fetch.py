"""A stalled coordinator write (issue 17): ``offsets.commit.timeout.ms`` is enforced and OffsetFetch answers
from durable state meanwhile.

The stall is injected at the storage layer (``Segment.write_at`` blocks until released, as a frozen disk
would; the ENOSPC/EIO tests inject there too). A commit whose write is not durable within the timeout is
answered COORDINATOR_NOT_AVAILABLE, as Kafka answers it (CoordinatorRuntime's write timeout, a
TimeoutException, normalised by GroupCoordinatorService); the write goes on, and state and log keep agreeing
whichever way it ends — made durable later (the offset is then served, and survives a restart) or failed (the
shard reloads and the offset is not served). OffsetFetch does not wait on that write: it answers the durable
offset at once; with require_stable it waits, and answers NOT_COORDINATOR after the timeout (Kafka's
handleOffsetFetchException).
"""

from __future__ import annotations

import asyncio
import errno
import threading
import time

import pytest

from bench.group_bench import join_body
from bench.hotpath_bench import connect
from bench.requests import encode
from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.runtime.coordinator_runtime import CoordinatorRuntime
from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.registry import response_reader
from groupcoord.storage.segment import Segment

pytestmark = pytest.mark.asyncio

TIMEOUT_MS = 400
COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 15, 16


class Stall:
    """Every segment write blocks (in the storage executor) until released; then it goes on, or fails."""

    def __init__(self, monkeypatch) -> None:
        self.released = threading.Event()
        self.fail_with: OSError | None = None
        self.entered = threading.Event()
        real = Segment.write_at

        def stalled(segment, position, data):
            self.entered.set()
            self.released.wait(30)
            if self.fail_with is not None:
                raise self.fail_with
            return real(segment, position, data)

        monkeypatch.setattr(Segment, "write_at", stalled)
        self._undo = lambda: monkeypatch.setattr(Segment, "write_at", real)

    def release(self, fail_with: OSError | None = None) -> None:
        self.fail_with = fail_with
        self.released.set()
        self._undo()


async def ask(broker: Broker, api_key: int, version: int, body: dict, wait_s: float = 10.0):
    conn, transport = connect(broker)
    conn.data_received(encode(api_key, version, body))
    deadline = time.monotonic() + wait_s
    while transport.frames == 0:
        if time.monotonic() > deadline:
            raise TimeoutError("no answer")
        await asyncio.sleep(0.005)
    frame = transport.last[4:]
    _, pos = parse_response_header(frame, api_key, True)
    return response_reader(api_key, version)(frame, pos)[0]


def commit_body(offset: int) -> dict:
    return {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                          "committed_leader_epoch": -1, "committed_metadata": ""}]}]}


async def commit(broker: Broker, offset: int) -> int:
    answer = await ask(broker, 8, 8, commit_body(offset))
    return int(answer.topics[0].partitions[0].error_code)


async def fetch(broker: Broker, require_stable: bool = False, topics=True) -> tuple[int, int | None]:
    """(group error, offset of orders-0 or None when the answer leaves it out)."""
    wanted = [{"name": "orders", "partition_indexes": [0]}] if topics else None
    answer = await ask(broker, 9, 8, {"groups": [{"group_id": "g", "member_id": None, "member_epoch": -1,
                                                  "topics": wanted}], "require_stable": require_stable})
    group = answer.groups[0]
    offsets = [int(p.committed_offset) for t in group.topics for p in t.partitions]
    return int(group.error_code), (offsets[0] if offsets else None)


async def started(data_dir) -> Broker:
    broker = Broker(data_dir=str(data_dir), group_initial_rebalance_delay_ms=0,
                    offsets_commit_timeout_ms=TIMEOUT_MS)
    await broker.start()
    await ask(broker, 19, 7, {"topics": [{"name": "orders", "num_partitions": 1, "replication_factor": 1,
                                          "assignments": [], "configs": []}], "timeout": 30000,
                              "validate_only": False})
    return broker


async def test_a_stalled_commit_times_out_and_fetch_answers_the_durable_offset_meanwhile(tmp_path, monkeypatch):
    broker = await started(tmp_path)
    try:
        assert await commit(broker, 5) == 0
        stall = Stall(monkeypatch)
        started_at = time.monotonic()
        stalled_commit = asyncio.ensure_future(commit(broker, 9))
        await asyncio.sleep(0.05)
        # OffsetFetch: at once, and the durable offset, not the one whose write is stalled
        fetched_at = time.monotonic()
        assert await fetch(broker) == (0, 5)
        assert await fetch(broker, topics=False) == (0, 5)
        assert time.monotonic() - fetched_at < TIMEOUT_MS / 1000
        assert not stalled_commit.done()
        # the commit is answered COORDINATOR_NOT_AVAILABLE once the timeout has passed, not when the disk wakes
        assert await stalled_commit == COORDINATOR_NOT_AVAILABLE
        assert TIMEOUT_MS / 1000 - 0.05 <= time.monotonic() - started_at < TIMEOUT_MS / 1000 + 2.0
        # require_stable waits for the pending write, then gives up as Kafka does
        assert await fetch(broker, require_stable=True) == (NOT_COORDINATOR, None)
        assert await fetch(broker) == (0, 5)
        stall.release()  # the write goes through after all: the offset is durable, and now served
        for _ in range(200):
            if await fetch(broker) == (0, 9):
                break
            await asyncio.sleep(0.01)
        assert await fetch(broker) == (0, 9)
        assert await fetch(broker, require_stable=True) == (0, 9)
        assert await commit(broker, 11) == 0
        assert await fetch(broker) == (0, 11)
    finally:
        await broker.stop()
    restarted = await started(tmp_path)
    try:
        assert await fetch(restarted) == (0, 11)  # the log agrees with what was served
    finally:
        await restarted.stop()


async def test_a_stalled_commit_that_then_fails_is_never_served(tmp_path, monkeypatch):
    reloaded = asyncio.Event()
    reload_after_failure = CoordinatorRuntime._reload_after_failure

    async def observed(runtime, rt):
        await reload_after_failure(runtime, rt)
        reloaded.set()

    monkeypatch.setattr(CoordinatorRuntime, "_reload_after_failure", observed)
    broker = await started(tmp_path)
    try:
        assert await commit(broker, 5) == 0
        stall = Stall(monkeypatch)
        assert await commit(broker, 9) == COORDINATOR_NOT_AVAILABLE
        assert await fetch(broker) == (0, 5)
        stall.release(fail_with=OSError(errno.EIO, "Input/output error"))
        # The shard reloads from its log after the failed append (answering COORDINATOR_LOAD_IN_PROGRESS
        # meanwhile; before the failure reaches it, it still serves the durable 5): wait for the reload itself,
        # not for the first (0, 5), which a fetch can see before the reload begins.
        await asyncio.wait_for(reloaded.wait(), 10)
        for _ in range(300):
            error, offset = await fetch(broker)
            if error == 0 and offset == 5:
                break
            await asyncio.sleep(0.02)
        assert await fetch(broker) == (0, 5)
    finally:
        await broker.stop()
    restarted = await started(tmp_path)
    try:
        assert await fetch(restarted) == (0, 5)
    finally:
        await restarted.stop()


def group_state(broker: Broker) -> str:
    """The group's state in the coordinator itself: a DescribeGroups answer would wait for the stalled write."""
    return broker.groups.shard_for("g").state.groups["g"].state.value


async def test_a_leaders_sync_whose_record_stalls_is_answered_at_the_timeout_and_the_group_rebalances(
        tmp_path, monkeypatch):
    """The group stays CompletingRebalance while the leader's assignment is written; not durable within the
    timeout, the SyncGroup is answered COORDINATOR_NOT_AVAILABLE and the group prepares the next rebalance (as
    Kafka's classicGroupSyncToLeader does when its append fails); the write completing later changes nothing."""
    broker = await started(tmp_path)
    try:
        member_id = (await ask(broker, 11, 9, join_body("g", ""))).member_id
        joined = await ask(broker, 11, 9, join_body("g", member_id))
        assert int(joined.error_code) == 0 and joined.leader == member_id
        stall = Stall(monkeypatch)
        started_at = time.monotonic()
        sync = asyncio.ensure_future(ask(broker, 14, 5, {
            "group_id": "g", "generation_id": joined.generation_id, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": member_id, "assignment": b"A"}]}))
        await asyncio.sleep(0.05)
        assert group_state(broker) == "CompletingRebalance" and not sync.done()
        assert int((await sync).error_code) == COORDINATOR_NOT_AVAILABLE
        assert TIMEOUT_MS / 1000 - 0.05 <= time.monotonic() - started_at < TIMEOUT_MS / 1000 + 2.0
        assert group_state(broker) == "PreparingRebalance"
        stall.release()
        await asyncio.sleep(0.2)
        assert group_state(broker) == "PreparingRebalance"
    finally:
        await broker.stop()
