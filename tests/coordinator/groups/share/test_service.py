"""Share groups through GroupCoordinatorService: the share persister is asked to initialise the partitions a
heartbeat found (after the heartbeat's records are durable) and to delete a deleted group's state; the share
partitions hear of members that leave. The persister here is an in-memory fake of SHARE_CONTRACT.md's."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.groups.lazy_requests import ShareGroupHeartbeat
from groupcoord.coordinator.groups.service import GroupCoordinatorService
from groupcoord.protocol.errors import ErrorCode
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from tests.coordinator.groups.harness import FakeTopics, topic_id

pytestmark = pytest.mark.timeout(60)

ORDERS = topic_id("orders")


class FakePersister:
    """SharePersister as the contract has it: initialize / delete, answering an ErrorCode per partition."""

    def __init__(self, fail: ErrorCode | None = None) -> None:
        self.fail = fail
        self.initialized: dict[tuple[str, uuid.UUID, int], tuple[int, int]] = {}
        self.calls: list[tuple] = []

    async def initialize(self, group_id, partitions, start_offset=-1, state_epoch=0):
        self.calls.append(("initialize", group_id, tuple(partitions), start_offset, state_epoch))
        await asyncio.sleep(0)
        if self.fail is not None:
            return {tp: self.fail for tp in partitions}
        for t, p in partitions:
            self.initialized[(group_id, t, p)] = (start_offset, state_epoch)
        return {tp: ErrorCode.none for tp in partitions}

    async def delete(self, group_id, partitions):
        self.calls.append(("delete", group_id, tuple(partitions)))
        for t, p in partitions:
            self.initialized.pop((group_id, t, p), None)
        return {tp: ErrorCode.none for tp in partitions}


@pytest.fixture
async def service(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    svc = GroupCoordinatorService(BrokerConfig(offsets_topic_num_partitions=3), manager, FakeTopics(orders=3))
    await svc.start()
    yield svc
    await svc.stop()
    await manager.close()


def hb(member: str, epoch: int, topics=None) -> ShareGroupHeartbeat:
    return ShareGroupHeartbeat("g", member, epoch, subscribed_topic_names=topics, client_id="c", client_host="/127.0.0.1")


async def until(condition, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def test_the_persister_initialises_the_subscribed_partitions_then_they_are_assigned(service):
    persister = service.share_persister = FakePersister()
    joined = await service.share_group_heartbeat(hb("m1", 0, ("orders",)))
    assert joined["error_code"] == ErrorCode.none and joined["assignment"] == {"topic_partitions": []}
    assert "_initialize" not in joined
    await until(lambda: service.share_state_partitions("g") is not None and service.share_state_partitions("g").initialized)
    assert persister.calls == [("initialize", "g", ((ORDERS, 0), (ORDERS, 1), (ORDERS, 2)), -1, 2)]
    again = await service.share_group_heartbeat(hb("m1", 2))
    assert again["member_epoch"] == 3
    assert again["assignment"] == {"topic_partitions": [{"topic_id": ORDERS, "partitions": [0, 1, 2]}]}
    assert service.share_group_members("g") == {"m1"} and service.share_group_members("other") is None


async def test_a_failed_initialisation_is_asked_again_by_a_later_heartbeat(service):
    service.share_persister = FakePersister(fail=ErrorCode.coordinator_not_available)
    await service.share_group_heartbeat(hb("m1", 0, ("orders",)))
    await until(lambda: not service.share_state_partitions("g").initializing)
    assert not service.share_state_partitions("g").initialized
    service.share_persister = FakePersister()
    await service.share_group_heartbeat(hb("m1", 2))
    await until(lambda: service.share_state_partitions("g").initialized)


async def test_deleting_an_empty_share_group_deletes_its_state_first(service):
    persister = service.share_persister = FakePersister()
    left: list[tuple[str, str]] = []
    service.share_member_listener = lambda g, m: left.append((g, m))
    await service.share_group_heartbeat(hb("m1", 0, ("orders",)))
    await until(lambda: service.share_state_partitions("g").initialized)
    assert (await service.delete_groups(["g"])) == [{"group_id": "g", "error_code": ErrorCode.non_empty_group}]
    assert not any(c[0] == "delete" for c in persister.calls)
    await service.share_group_heartbeat(hb("m1", -1))
    assert left == [("g", "m1")]
    deleted: list[str] = []
    service.share_group_deleted_listener = deleted.append
    assert (await service.delete_groups(["g"])) == [{"group_id": "g", "error_code": ErrorCode.none}]
    assert deleted == ["g"]
    assert ("delete", "g", ((ORDERS, 0), (ORDERS, 1), (ORDERS, 2))) in persister.calls
    assert not persister.initialized
    assert not service.share_group_exists("g")


async def test_without_a_persister_partitions_count_as_initialised(service):
    await service.share_group_heartbeat(hb("m1", 0, ("orders",)))
    await until(lambda: service.share_state_partitions("g").initialized)
    described = (await service.describe_share_groups(["g", "", "nope"]))
    assert [d["error_code"] for d in described] == [ErrorCode.none, ErrorCode.invalid_group_id, ErrorCode.group_id_not_found]
