"""Every served version of every group API, through the handlers, built into kio responses and encoded."""

import inspect
import io
from types import SimpleNamespace
from dataclasses import dataclass

import pytest
from kio.serial import entity_writer

from groupcoord.coordinator.apis import (consumer_group_describe, consumer_group_heartbeat, delete_groups,
                                         describe_groups, find_coordinator, heartbeat, join_group, leave_group,
                                         list_groups, offset_commit, offset_delete, offset_fetch, sync_group)
from groupcoord.coordinator.apis.registry import register_apis
from groupcoord.coordinator.apis.services import Services
from groupcoord.coordinator.cluster import ClusterIdentity
from groupcoord.coordinator.groups.service import GroupCoordinatorService
from groupcoord.protocol.build import build
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.registry import request_class, response_class
from tests.coordinator.groups.harness import FakeTopics, subscription
from tests.coordinator.groups.test_service import PARTITIONS, GateLog, GateManager, config

pytestmark = pytest.mark.timeout(60)

GROUP_APIS = (offset_commit, offset_fetch, find_coordinator, join_group, heartbeat, leave_group, sync_group,
              describe_groups, list_groups, delete_groups, offset_delete, consumer_group_heartbeat,
              consumer_group_describe)
API_VERSIONS = {m.API.key: (m.API.key.name, m.API.min_version, m.API.max_version) for m in GROUP_APIS}


def register(dispatcher, service):
    register_apis(dispatcher, Services(ClusterIdentity(1, "127.0.0.1", 9092, "c"), None, None, service, None), GROUP_APIS)


@dataclass
class Ctx:
    api_version: int
    client_id: str = "client-1"
    client_host: str = "127.0.0.1"
    listener: str = "PLAINTEXT"  # as RequestContext: the listener the request came in on


class FakeDispatcher:
    def __init__(self):
        self.handlers = {}

    def register(self, api_key, handler, low, high, fast=None, heavy=None):
        self.handlers[api_key] = (handler, low, high)


class Wire:
    """Calls handlers the way the server does: kio request in, dict out, built and encoded as the version's response."""

    def __init__(self, service):
        self.dispatcher = FakeDispatcher()
        register(self.dispatcher, service)

    async def call(self, api_key: int, version: int, request: dict):
        handler, low, high = self.dispatcher.handlers[api_key]
        assert low <= version <= high
        req = build(request_class(api_key, version), request)
        result = handler(Ctx(version), req)
        if inspect.isawaitable(result):  # a handler may answer at once (Heartbeat) or hand back a future
            result = await result
        response = build(response_class(api_key, version), result)
        entity_writer(type(response))(io.BytesIO(), response)  # must encode at this version
        return response


@pytest.fixture
async def wire():
    service = GroupCoordinatorService(config(), GateManager({p: GateLog() for p in range(PARTITIONS)}), FakeTopics(orders=2))
    await service.start()
    yield Wire(service)
    await service.stop()


def test_registered_ranges_match_the_table():
    d = FakeDispatcher()
    register(d, SimpleNamespace(config=config()))
    assert {k: (lo, hi) for k, (_, lo, hi) in d.handlers.items()} == {k: (lo, hi) for k, (_, lo, hi) in API_VERSIONS.items()}


@pytest.mark.parametrize("version", range(0, 7))
async def test_find_coordinator_names_this_broker_for_groups_only(wire, version):
    if version >= 4:
        r = await wire.call(10, version, {"key_type": 0, "coordinator_keys": ("g1", "g2")})
        assert [c.key for c in r.coordinators] == ["g1", "g2"] and r.coordinators[0].node_id == 1
        r = await wire.call(10, version, {"key_type": 1, "coordinator_keys": ("txn",)})
        assert r.coordinators[0].error_code == ErrorCode.coordinator_not_available
    else:
        r = await wire.call(10, version, {"key": "g", "key_type": 0})
        assert (r.error_code, r.node_id, r.host, r.port) == (ErrorCode.none, 1, "127.0.0.1", 9092)
        if version >= 1:
            r = await wire.call(10, version, {"key": "t", "key_type": 1})
            assert r.error_code == ErrorCode.coordinator_not_available


JOIN = {"session_timeout": 10_000, "rebalance_timeout": 30_000, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("orders")}]}


@pytest.mark.parametrize("join_version", range(0, 10))
async def test_a_whole_group_lifecycle_at_each_join_group_version(wire, join_version):
    group = f"group-v{join_version}"
    sync_v, hb_v, leave_v = min(join_version, 5), min(join_version, 4), min(join_version, 5)
    r = await wire.call(11, join_version, {"group_id": group, "member_id": "", **JOIN})
    if join_version >= 4:
        assert r.error_code == ErrorCode.member_id_required
        r = await wire.call(11, join_version, {"group_id": group, "member_id": r.member_id, **JOIN})
    assert r.error_code == ErrorCode.none and r.generation_id == 1 and r.leader == r.member_id
    member = r.member_id
    assert member.startswith("client-1-")
    s = await wire.call(14, sync_v, {"group_id": group, "generation_id": 1, "member_id": member,
                                     "protocol_type": "consumer", "protocol_name": "range",
                                     "assignments": [{"member_id": member, "assignment": b"mine"}]})
    assert s.error_code == ErrorCode.none and s.assignment == b"mine"
    hb = await wire.call(12, hb_v, {"group_id": group, "generation_id": 1, "member_id": member})
    assert hb.error_code == ErrorCode.none

    for commit_v in (2, 5, 8, 9):
        c = await wire.call(8, commit_v, {"group_id": group, "generation_id_or_member_epoch": 1, "member_id": member,
                                          "retention_time": -1,
                                          "topics": [{"name": "orders", "partitions": [
                                              {"partition_index": 0, "committed_offset": 10 + commit_v, "committed_metadata": "m"}]}]})
        assert c.topics[0].partitions[0].error_code == ErrorCode.none

    for fetch_v in (1, 2, 5, 7):
        f = await wire.call(9, fetch_v, {"group_id": group, "topics": [{"name": "orders", "partition_indexes": (0, 1)}]})
        assert [p.committed_offset for p in f.topics[0].partitions] == [19, -1]
    f = await wire.call(9, 8, {"groups": [{"group_id": group, "topics": None}, {"group_id": "other", "topics": None}], "require_stable": True})
    assert f.groups[0].topics[0].partitions[0].committed_offset == 19 and f.groups[1].topics == ()

    for describe_v in range(0, 6):
        d = await wire.call(15, describe_v, {"groups": (group, "missing"), "include_authorized_operations": True})
        assert (d.groups[0].group_state, d.groups[0].protocol_data, d.groups[1].group_state) == ("Stable", "range", "Dead")
        assert d.groups[0].members[0].member_assignment == b"mine"
    for list_v in range(0, 6):
        listed = await wire.call(16, list_v, {"states_filter": (), "types_filter": ()})
        assert group in [g.group_id for g in listed.groups]

    if leave_v >= 3:
        left = await wire.call(13, leave_v, {"group_id": group, "members": [{"member_id": member}]})
        assert left.members[0].error_code == ErrorCode.none
    else:
        left = await wire.call(13, leave_v, {"group_id": group, "member_id": member})
    assert left.error_code == ErrorCode.none

    od = await wire.call(47, 0, {"group_id": group, "topics": [{"name": "orders", "partitions": [{"partition_index": 0}]}]})
    assert od.error_code == ErrorCode.none and od.topics[0].partitions[0].error_code == ErrorCode.none
    for delete_v in range(0, 3):
        deleted = await wire.call(42, delete_v, {"groups_names": (group,)})
        expected = ErrorCode.none if delete_v == 0 else ErrorCode.group_id_not_found
        assert deleted.results[0].error_code == expected


async def test_join_group_v0_uses_the_session_timeout_as_rebalance_timeout(wire):
    r = await wire.call(11, 0, {"group_id": "old", "member_id": "", "session_timeout": 7000, "protocol_type": "consumer",
                                "protocols": [{"name": "range", "metadata": b""}]})
    assert r.error_code == ErrorCode.none
