"""Transactional offsets on the group side: TxnOffsetCommit is pending until the transaction's marker,
committed or dropped by it, seen as UNSTABLE_OFFSET_COMMIT by a require_stable fetch meanwhile, and the
same after a restart (the log's transactional batch and control batch are replayed as Kafka replays them)."""

import asyncio

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.groups.lazy_requests import OffsetFetch, TxnOffsetCommit
from groupcoord.coordinator.groups.service import GroupCoordinatorService
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from tests.coordinator.groups.harness import FakeTopics
from tests.coordinator.groups.test_service import form_group

pytestmark = pytest.mark.timeout(60)

PARTITIONS = 3
PID, EPOCH = 4000, 2


def config() -> BrokerConfig:
    return BrokerConfig(offsets_topic_num_partitions=PARTITIONS, group_initial_rebalance_delay_ms=0)


def txn_commit(group, offset, *, pid=PID, generation=-1, member="", instance=None, partition=0) -> TxnOffsetCommit:
    return TxnOffsetCommit("tx", group, pid, EPOCH, (("orders", (CommitPartition(partition, offset, -1, "t"),)),),
                           generation, member, instance)


def codes(response) -> list:
    return [p["error_code"] for t in response["topics"] for p in t["partitions"]]


async def fetched(service, group, stable=True):
    answer = await service.fetch_offsets(OffsetFetch(group, (("orders", (0,)),), require_stable=stable))
    part = answer["topics"][0]["partitions"][0]
    return part["error_code"], part["committed_offset"]


class Broker:
    def __init__(self, path):
        self.path = path

    async def __aenter__(self):
        self.manager = LogManager(self.path, FsyncPolicy.ALWAYS, LogConfig())
        await self.manager.open_existing()
        self.service = GroupCoordinatorService(config(), self.manager, FakeTopics(orders=2))
        await self.service.start()
        return self.service

    async def __aexit__(self, *exc):
        await self.service.stop()
        await self.manager.close()


def offsets_partition(group):
    return partition_for(group, PARTITIONS)


async def test_a_transactional_offset_is_pending_until_the_commit_marker_then_committed(tmp_path):
    async with Broker(tmp_path) as service:
        assert codes(await service.commit_transactional_offsets(txn_commit("g", 10))) == [ErrorCode.none]
        assert await fetched(service, "g") == (ErrorCode.unstable_offset_commit, -1)
        assert await fetched(service, "g", stable=False) == (ErrorCode.none, -1)
        marker = await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, True)
        assert marker == {"error_code": ErrorCode.none}
        assert await fetched(service, "g") == (ErrorCode.none, 10)


async def test_an_aborted_transactional_offset_vanishes_and_the_earlier_one_stays(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_offsets(OffsetCommit("g", (("orders", (CommitPartition(0, 5),)),)))
        await service.commit_transactional_offsets(txn_commit("g", 10))
        assert await fetched(service, "g", stable=False) == (ErrorCode.none, 5)
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, False)
        assert await fetched(service, "g") == (ErrorCode.none, 5)


async def test_a_plain_commit_written_after_the_transactional_one_wins_at_the_marker(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_transactional_offsets(txn_commit("g", 10))
        await service.commit_offsets(OffsetCommit("g", (("orders", (CommitPartition(0, 20),)),)))
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, True)
        assert await fetched(service, "g") == (ErrorCode.none, 20)


async def test_only_the_partitions_with_pending_offsets_are_unstable(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_offsets(OffsetCommit("g", (("orders", (CommitPartition(1, 3),)),)))
        await service.commit_transactional_offsets(txn_commit("g", 10))
        answer = await service.fetch_offsets(OffsetFetch("g", None, require_stable=True))
        by_partition = {p["partition_index"]: (p["error_code"], p["committed_offset"])
                        for t in answer["topics"] for p in t["partitions"]}
        assert by_partition == {1: (ErrorCode.none, 3)}  # the pending one is not committed, so not listed
        answer = await service.fetch_offsets(OffsetFetch("g", (("orders", (0, 1)),), require_stable=True))
        assert [(p["error_code"], p["committed_offset"]) for p in answer["topics"][0]["partitions"]] == \
            [(ErrorCode.unstable_offset_commit, -1), (ErrorCode.none, 3)]


async def test_two_producers_pending_on_one_partition_are_settled_separately(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_transactional_offsets(txn_commit("g", 10, pid=1))
        await service.commit_transactional_offsets(txn_commit("g", 11, pid=2))
        await service.complete_transaction(offsets_partition("g"), 1, EPOCH, 0, True)
        assert await fetched(service, "g") == (ErrorCode.unstable_offset_commit, -1)
        assert await fetched(service, "g", stable=False) == (ErrorCode.none, 10)
        await service.complete_transaction(offsets_partition("g"), 2, EPOCH, 0, False)
        assert await fetched(service, "g") == (ErrorCode.none, 10)


async def test_a_restart_before_the_marker_keeps_the_offset_pending_and_the_marker_then_settles_it(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_transactional_offsets(txn_commit("g", 10))
        await service.commit_transactional_offsets(txn_commit("h", 7, pid=PID + 1))
        await service.complete_transaction(offsets_partition("h"), PID + 1, EPOCH, 0, False)
    async with Broker(tmp_path) as service:
        assert await fetched(service, "g") == (ErrorCode.unstable_offset_commit, -1)
        assert await fetched(service, "h") == (ErrorCode.none, -1)
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, True)
    async with Broker(tmp_path) as service:
        assert await fetched(service, "g") == (ErrorCode.none, 10)


async def test_the_log_holds_a_transactional_batch_and_a_control_batch(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_transactional_offsets(txn_commit("g", 10))
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 3, True)
        log = await service._runtime.log_manager.get_or_create(OFFSETS_TOPIC, offsets_partition("g"))
        headers = [h async for h, _ in log.batches(0)]
    assert [(h.is_transactional, h.is_control, h.producer_id, h.producer_epoch) for h in headers] == [
        (True, False, PID, EPOCH), (True, True, PID, EPOCH)]


async def test_group_metadata_checks_of_a_classic_group(tmp_path):
    async with Broker(tmp_path) as service:
        members = await form_group(service, "g", "a")
        ok = await service.commit_transactional_offsets(txn_commit("g", 1, generation=1, member=members[0]))
        assert codes(ok) == [ErrorCode.none]
        assert codes(await service.commit_transactional_offsets(
            txn_commit("g", 1, generation=2, member=members[0]))) == [ErrorCode.illegal_generation]
        assert codes(await service.commit_transactional_offsets(
            txn_commit("g", 1, generation=1, member="nobody"))) == [ErrorCode.unknown_member_id]
        assert codes(await service.commit_transactional_offsets(
            txn_commit("g", 1, generation=1, member=members[0], instance="i-1"))) == [ErrorCode.unknown_member_id]
        # A producer naming no member (TxnOffsetCommit v0-2, or a standalone producer) is let through.
        assert codes(await service.commit_transactional_offsets(txn_commit("g", 1))) == [ErrorCode.none]


async def test_an_unknown_group_is_accepted_only_without_a_generation(tmp_path):
    async with Broker(tmp_path) as service:
        assert codes(await service.commit_transactional_offsets(txn_commit("new", 1, generation=3, member="m"))) == \
            [ErrorCode.illegal_generation]
        assert codes(await service.commit_transactional_offsets(txn_commit("new2", 1))) == [ErrorCode.none]


async def test_an_unknown_partition_is_refused(tmp_path):
    async with Broker(tmp_path) as service:
        assert codes(await service.commit_transactional_offsets(txn_commit("g", 1, partition=9))) == \
            [ErrorCode.unknown_topic_or_partition]


async def test_a_marker_for_a_partition_past_the_topic_is_refused():
    service = GroupCoordinatorService(config(), None, FakeTopics(orders=1))
    answer = await asyncio.ensure_future(service.complete_transaction(PARTITIONS, PID, EPOCH, 0, True))
    assert answer == {"error_code": ErrorCode.unknown_topic_or_partition}


def test_group_metadata_checks_of_a_consumer_group(h):
    """A KIP-848 group: the member id must be a member, the generation its member epoch (a stale one is
    ILLEGAL_GENERATION, what a transactional producer understands, not STALE_MEMBER_EPOCH)."""
    joined = h.cg_join("cg", "m1")
    epoch = joined["member_epoch"]

    def commit(**kw):
        t = h._ticket()
        h._apply(h.shard.handle_txn_offset_commit(txn_commit("cg", 3, **kw), t.token, h.now))
        return codes(t.response)

    assert commit(generation=epoch, member="m1") == [ErrorCode.none]
    assert commit(generation=epoch + 1, member="m1") == [ErrorCode.illegal_generation]
    assert commit(generation=epoch, member="ghost") == [ErrorCode.unknown_member_id]
    assert commit() == [ErrorCode.unknown_member_id]  # a group with members needs a member
    assert h.shard.fetch_offsets(OffsetFetch("cg", (("orders", (0,)),), require_stable=True))["topics"][0][
        "partitions"][0]["error_code"] == ErrorCode.unstable_offset_commit


async def test_offsets_pending_in_a_transaction_are_not_expired_nor_their_group_removed(tmp_path):
    from groupcoord.coordinator.groups import retention

    async with Broker(tmp_path) as service:
        await service.commit_offsets(OffsetCommit("old", (("orders", (CommitPartition(0, 1),)),)))
        await service.commit_transactional_offsets(txn_commit("old", 2))
        await service.commit_transactional_offsets(txn_commit("fresh", 3, pid=PID + 1))
        far = 10 ** 13
        for group in ("old", "fresh"):
            shard = service.shard_for(group)
            retention.expire_offsets(shard.state, far)
        assert service.committed_offsets("old") == {("orders", 0): 1}
        assert "fresh" in service.shard_for("fresh").groups
        await service.complete_transaction(offsets_partition("fresh"), PID + 1, EPOCH, 0, True)
        assert await fetched(service, "fresh") == (ErrorCode.none, 3)


async def test_offset_delete_and_group_deletion_drop_pending_offsets(tmp_path):
    from groupcoord.coordinator.groups.lazy_requests import OffsetDelete

    async with Broker(tmp_path) as service:
        await service.commit_transactional_offsets(txn_commit("g", 10))
        deleted = await service.delete_offsets(OffsetDelete("g", (("orders", (0,)),)))
        assert deleted["error_code"] == ErrorCode.none
        assert await fetched(service, "g") == (ErrorCode.none, -1)  # the tombstone dropped the pending offset
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, True)
        assert await fetched(service, "g") == (ErrorCode.none, -1)
        await service.commit_transactional_offsets(txn_commit("h", 4, pid=PID + 2))
        assert (await service.delete_groups(["h"]))[0]["error_code"] == ErrorCode.none
        await service.complete_transaction(offsets_partition("h"), PID + 2, EPOCH, 0, True)
        assert await fetched(service, "h") == (ErrorCode.none, -1)
    async with Broker(tmp_path) as service:  # the same after a replay of the log
        assert await fetched(service, "g") == (ErrorCode.none, -1)
        assert await fetched(service, "h") == (ErrorCode.none, -1)
