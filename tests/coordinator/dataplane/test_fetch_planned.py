"""A fetch plans its partitions' reads on the loop and runs them in one executor job (fetch._run_reads), or, when
they reach only a few tails, on the loop from the page cache with the job taking what the cache did not hold: the
answers are those of reading the partitions one by one with PartitionLog.read under KIP-74's budget, as the fetch
did before, whatever the sizes, limits and offsets, on the loop or not; the job is one hop however many partitions;
a segment deleted between the plan and the read, and a corrupt batch, are answered as before."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings, strategies as st

import pytest

from groupcoord.coordinator.dataplane import fetch as fetch_module
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.file_region import FileRegion
from groupcoord.storage import segment_reads
from groupcoord.storage.errors import NotCached
from groupcoord.storage.planned_read import READ_AGAIN, PlannedRead
from groupcoord.storage.segment import Segment
from tests.coordinator.dataplane.conftest import Node
from tests.support.page_cache import needs_nowait
from tests.coordinator.dataplane.test_fetch import (append, batch, partitions_of, request,
                                                     restarted_with_a_corrupt_partition_0)


async def one_by_one(dataplane, parts: list[tuple[int, int, int]], max_bytes: int) -> dict[int, bytes | None]:
    """Each partition's records as the fetch read them before its reads were planned: PartitionLog.read, one
    partition after the other, each up to its limit and what is left of max_bytes, the first batch found whole
    (None: out of range)."""
    remaining, min_one, answers = max_bytes, True, {}
    for partition, offset, limit in parts:
        log = dataplane.topics.log("orders", partition)
        if not log.log_start_offset <= offset <= log.high_watermark:
            answers[partition] = None
            continue
        data = b""
        if offset < log.high_watermark and (remaining > 0 or min_one):
            data = await log.read(offset, max(0, min(limit, remaining)), min_one=min_one, view=True)
        if data:
            remaining -= len(data)
            min_one = False
        answers[partition] = bytes(data)
    return answers


def records_of(part: dict) -> bytes | None:
    if part["error_code"] is ErrorCode.offset_out_of_range:
        return None
    assert part["error_code"] is ErrorCode.none
    records = part["records"]
    if type(records) is FileRegion:
        try:
            return bytes(records)
        finally:
            records.close()
    return bytes(records)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(logs=st.lists(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 900)), max_size=12), min_size=1, max_size=5),
       reads=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 9000)), min_size=5, max_size=5),
       max_bytes=st.integers(0, 30_000), regions=st.booleans(), region_min=st.sampled_from([0, 1 << 16]),
       reach=st.sampled_from([-1, 1 << 30]))
def test_planned_reads_answer_as_the_reads_one_by_one(tmp_path_factory, logs, reads, max_bytes, regions, region_min,
                                                      reach):
    """``reach``: -1, every read on a thread; 1 GiB, every read on the loop (the page cache holds these)."""
    node = Node(tmp_path_factory.mktemp("planned"))

    async def scenario() -> None:
        dataplane = await node.start()
        try:
            await dataplane.topics.create("orders", len(logs))
            for partition, batches in enumerate(logs):
                for records, size in batches:
                    await append(dataplane, "orders", partition, batch(records, size))
            parts = [(partition, *reads[partition]) for partition in range(len(logs))]
            expected = await one_by_one(dataplane, parts, max_bytes)
            with mock.patch.object(segment_reads, "REGION_MIN", region_min), \
                    mock.patch.object(fetch_module, "LOOP_READ_REACH", reach):
                response = await dataplane.fetch.fetch(request(*parts, max_bytes=max_bytes), regions=regions)
            got = {index: records_of(part) for index, part in partitions_of(response).items()}
            assert got == expected
        finally:
            await node.stop()

    asyncio.run(scenario())


def executor_jobs(loop) -> tuple[list, Any]:
    """The functions handed to the loop's executor, and the patch that records them."""
    real = loop.run_in_executor
    jobs: list = []

    def counting(executor, fn, *args):
        jobs.append((fn, args))
        return real(executor, fn, *args)

    return jobs, mock.patch.object(loop, "run_in_executor", counting)


async def test_a_fetch_of_many_partitions_reads_them_in_one_executor_job(dataplane):
    """Reads reaching past LOOP_READ_REACH (a consumer catching up): one job on a thread for all of them."""
    await dataplane.topics.create("orders", 6)
    for partition in range(6):
        await append(dataplane, "orders", partition, batch(3))
    jobs, counting = executor_jobs(asyncio.get_running_loop())
    with counting, mock.patch.object(fetch_module, "LOOP_READ_REACH", 100):
        response = await dataplane.fetch.fetch(request(*[(p, 0, 1 << 20) for p in range(6)]))
    assert all(part["records"] for part in partitions_of(response).values())
    assert [fn for fn, _ in jobs] == [fetch_module._run_reads]


@needs_nowait
async def test_a_fetch_of_tails_the_page_cache_holds_reads_them_on_the_loop(dataplane):
    await dataplane.topics.create("orders", 6)
    for partition in range(6):
        await append(dataplane, "orders", partition, batch(3))
    parts = [(p, 0, 1 << 20) for p in range(6)]
    expected = await one_by_one(dataplane, parts, 1 << 20)
    jobs, counting = executor_jobs(asyncio.get_running_loop())
    with counting:
        response = await dataplane.fetch.fetch(request(*parts))
    assert jobs == []
    assert {index: records_of(part) for index, part in partitions_of(response).items()} == expected


@needs_nowait
async def test_a_read_the_page_cache_does_not_hold_goes_to_a_thread_with_the_rest_and_the_budget_left(dataplane):
    """Partition 2's bytes are not cached: partitions 0 and 1 are read on the loop, 2 and 3 in one job, by what is
    left of the response's max_bytes (3's read cut short by it): the answer is the one read one by one."""
    await dataplane.topics.create("orders", 4)
    for partition in range(4):
        for _ in range(3):
            await append(dataplane, "orders", partition, batch(4, 200))
    parts = [(p, 0, 1500) for p in range(4)]
    expected = await one_by_one(dataplane, parts, 3500)
    uncached = dataplane.topics.log("orders", 2).segments[0]
    real = Segment.read_cached

    def read_cached(self, position, size):
        if self is uncached:
            raise NotCached("stood in for EAGAIN")
        return real(self, position, size)

    jobs, counting = executor_jobs(asyncio.get_running_loop())
    with counting, mock.patch.object(Segment, "read_cached", read_cached):
        response = await dataplane.fetch.fetch(request(*parts, max_bytes=3500))
    assert [(fn, [item.log.partition for item in args[0]]) for fn, args in jobs] == [(fetch_module._run_reads, [2, 3])]
    got = {index: records_of(part) for index, part in partitions_of(response).items()}
    assert got == expected
    assert got[2] and got[3] is not None and len(got[3]) < len(got[2])  # the budget ran short in the job


async def test_a_segment_deleted_between_the_plan_and_the_read_is_read_again_and_the_rest_after_it(dataplane):
    """The job stops at the partition whose segment went (READ_AGAIN); that partition and the ones after it are
    planned again and read one by one, with the budget the job left: the answer is the undisturbed one."""
    await dataplane.topics.create("orders", 4)
    for partition in range(4):
        for _ in range(3):
            await append(dataplane, "orders", partition, batch(4, 200))
    parts = [(p, 2, 1500) for p in range(4)]
    expected = partitions_of(await dataplane.fetch.fetch(request(*parts, max_bytes=3000)))
    real = PlannedRead.run
    first = []

    def deleted_once(self, max_bytes, min_one, cached_only=False):
        if not first:
            first.append(self)
            return READ_AGAIN
        return real(self, max_bytes, min_one, cached_only)

    with mock.patch.object(PlannedRead, "run", deleted_once):
        got = partitions_of(await dataplane.fetch.fetch(request(*parts, max_bytes=3000)))
    assert first
    assert {p: bytes(part["records"]) for p, part in got.items()} == \
        {p: bytes(part["records"]) for p, part in expected.items()}
    assert any(not part["records"] for part in got.values())  # the budget ran out: the rest were left unread


async def test_a_corrupt_batch_takes_its_log_offline_for_the_next_fetches_too(node):
    dataplane = await restarted_with_a_corrupt_partition_0(node)
    for _ in range(2):
        parts = partitions_of(await dataplane.fetch.fetch(request((0, 0, 1 << 20), (1, 0, 1 << 20))))
        assert parts[0]["error_code"] is ErrorCode.kafka_storage_error
        assert parts[1]["error_code"] is ErrorCode.none and parts[1]["records"]
    assert dataplane.topics.log("orders", 0) is None  # offline: the catalog serves it no more
