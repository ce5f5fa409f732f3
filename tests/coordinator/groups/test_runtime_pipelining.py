"""Group commit, pipelined: while one append of a shard waits for its fsync, the next turn's commits are
written behind it, and every answer still waits until its own records (and all earlier ones) are durable."""

import asyncio
import threading

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.groups.service import GroupCoordinatorService
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC
from groupcoord.storage import segment as segment_module
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from tests.coordinator.groups.harness import FakeTopics

pytestmark = pytest.mark.timeout(60)


def commit(group: str, offset: int) -> OffsetCommit:
    return OffsetCommit(group, (("orders", (CommitPartition(0, offset, -1, ""),)),))


async def until(condition, limit_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


async def test_the_next_turn_is_written_while_the_previous_waits_for_its_fsync(tmp_path, monkeypatch):
    gate = threading.Event()
    fsyncs: list[str] = []
    real_flush = segment_module.Segment.flush

    def slow_flush(self):
        fsyncs.append("started")
        gate.wait(30)  # the first fsync is held until the test lets it go (longer than `until` waits)
        real_flush(self)

    manager = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig())
    service = GroupCoordinatorService(BrokerConfig(offsets_topic_num_partitions=3), manager, FakeTopics(orders=1))
    await service.start()
    try:
        log = await manager.get_or_create(OFFSETS_TOPIC, partition_for("g", 3), service.log_config)
        monkeypatch.setattr(segment_module.Segment, "flush", slow_flush)
        first = service.commit_offsets(commit("g", 1))
        await until(lambda: fsyncs)  # the first append is written and its fsync under way (held)
        end_after_first = log.log_end_offset
        second = service.commit_offsets(commit("g", 2))
        third = service.commit_offsets(commit("g", 3))
        await until(lambda: log.log_end_offset > end_after_first)  # written behind the held fsync
        await asyncio.sleep(0.05)
        assert not first.done() and not second.done() and not third.done()  # nothing answered before durable
        assert service.is_loading("g") is False
        order: list[str] = []
        first.add_done_callback(lambda _f: order.append("first"))
        second.add_done_callback(lambda _f: order.append("second"))
        third.add_done_callback(lambda _f: order.append("third"))
        gate.set()
        answers = await asyncio.gather(first, second, third)
        assert order == ["first", "second", "third"]
        assert all(a["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none for a in answers)
        assert service.committed_offsets("g") == {("orders", 0): 3}
        assert len(fsyncs) <= 2  # the second and third shared one fsync after the first
    finally:
        gate.set()
        await service.stop()
        await manager.close()

    # What was acknowledged is what the log holds, in order: a fresh start reads the last commit back.
    manager = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig())
    service = GroupCoordinatorService(BrokerConfig(offsets_topic_num_partitions=3), manager, FakeTopics(orders=1))
    await service.start()
    try:
        assert service.committed_offsets("g") == {("orders", 0): 3}
    finally:
        await service.stop()
        await manager.close()


async def test_a_join_that_writes_nothing_is_answered_without_waiting_for_the_shards_pending_write(tmp_path, monkeypatch):
    """Kafka's classicGroupJoin completes its response future inside the operation: MEMBER_ID_REQUIRED (and
    any JoinGroup answer of an operation that wrote nothing) does not wait behind another group's append on
    the same shard, while a heartbeat (a write event's own result in Kafka too) and a commit still do."""
    from groupcoord.coordinator.groups.requests import Heartbeat, JoinGroup

    gate = threading.Event()
    fsyncs: list[str] = []
    real_flush = segment_module.Segment.flush

    def slow_flush(self):
        fsyncs.append("started")
        gate.wait(30)
        real_flush(self)

    # Two group ids of the same shard (one partition).
    manager = LogManager(tmp_path, FsyncPolicy.BATCH, LogConfig())
    service = GroupCoordinatorService(BrokerConfig(offsets_topic_num_partitions=1, group_initial_rebalance_delay_ms=0),
                                      manager, FakeTopics(orders=1))
    await service.start()
    try:
        await manager.get_or_create(OFFSETS_TOPIC, 0, service.log_config)
        monkeypatch.setattr(segment_module.Segment, "flush", slow_flush)
        commit_future = service.commit_offsets(commit("g", 1))
        await until(lambda: fsyncs)  # the commit's append is under way, its fsync held
        join = service.join_group(JoinGroup("other", "", "consumer", (("range", b""),), 30000, 60000,
                                            client_id="c", client_host="/127.0.0.1", version=9))
        assert join.done() and join.result()["error_code"] == ErrorCode.member_id_required
        # The join phase the delayed join's timer completes (group.initial.rebalance.delay.ms=0 here) answers
        # from inside its operation too: generation 1, while the commit still waits for its fsync.
        joined = await asyncio.wait_for(service.join_group(JoinGroup(
            "other", join.result()["member_id"], "consumer", (("range", b""),), 30000, 60000, client_id="c",
            client_host="/127.0.0.1", version=9)), 5)
        assert joined["error_code"] == ErrorCode.none and joined["generation_id"] == 1
        beat = service.heartbeat_inline(Heartbeat("other", 1, "nobody"))
        assert not commit_future.done() and not (isinstance(beat, asyncio.Future) and beat.done())
        assert isinstance(beat, asyncio.Future)  # behind the pending write, as before
        gate.set()
        assert (await commit_future)["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none
        assert (await beat)["error_code"] == ErrorCode.unknown_member_id
    finally:
        gate.set()
        await service.stop()
        await manager.close()
