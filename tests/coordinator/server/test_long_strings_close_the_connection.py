"""A string longer than 32,767 bytes closes the connection, as Kafka 4.3.1 does on every group API
(issue 17). Measured against the reference broker: FindCoordinator v4, JoinGroup v9, SyncGroup v5,
Heartbeat v4, LeaveGroup v5, OffsetCommit v8, OffsetFetch v8, DescribeGroups v5, DeleteGroups v2,
ConsumerGroupHeartbeat v0 and ConsumerGroupDescribe v0 with a 32,768-byte group id all had their
connection closed; at 32,767 bytes each was answered. Before, such an id reached the coordinator, whose
record key cannot hold it: NOT_COORDINATOR (retried forever) and a shard reload that failed a neighbouring
group's commit."""

from __future__ import annotations

import pytest

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.hashing import partition_for
from tests.support.wire import WireClient

LONG = "g" * 32768


def bodies(gid: str) -> dict[str, tuple[int, int, dict]]:
    return {
        "FindCoordinator": (10, 4, {"key_type": 0, "coordinator_keys": [gid]}),
        "JoinGroup": (11, 9, {"group_id": gid, "session_timeout": 10000, "rebalance_timeout": 10000, "member_id": "",
                              "group_instance_id": None, "protocol_type": "consumer",
                              "protocols": [{"name": "range", "metadata": b""}], "reason": None}),
        "SyncGroup": (14, 5, {"group_id": gid, "generation_id": 1, "member_id": "m", "group_instance_id": None,
                              "protocol_type": "consumer", "protocol_name": "range", "assignments": []}),
        "Heartbeat": (12, 4, {"group_id": gid, "generation_id": 1, "member_id": "m", "group_instance_id": None}),
        "LeaveGroup": (13, 5, {"group_id": gid, "members": [{"member_id": "m", "group_instance_id": None,
                                                             "reason": None}]}),
        "OffsetCommit": (8, 8, {"group_id": gid, "generation_id_or_member_epoch": -1, "member_id": "",
                                "group_instance_id": None, "topics": [{"name": "orders", "partitions": [
                                    {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                                     "committed_metadata": ""}]}]}),
        "OffsetFetch": (9, 8, {"groups": [{"group_id": gid, "topics": None}], "require_stable": False}),
        "DescribeGroups": (15, 5, {"groups": [gid], "include_authorized_operations": False}),
        "DeleteGroups": (42, 2, {"groups_names": [gid]}),
        "ConsumerGroupHeartbeat": (68, 0, {"group_id": gid, "member_id": "", "member_epoch": 0, "instance_id": None,
                                           "rack_id": None, "rebalance_timeout_ms": 10000,
                                           "subscribed_topic_names": ["orders"], "server_assignor": None,
                                           "topic_partitions": []}),
        "ConsumerGroupDescribe": (69, 0, {"group_ids": [gid], "include_authorized_operations": False}),
    }


@pytest.mark.parametrize("api", list(bodies("x")))
async def test_a_32768_byte_group_id_closes_the_connection_and_spares_the_neighbours(tmp_path, api):
    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=0) as broker:
        await broker.dataplane.topics.create("orders", 1)
        neighbour = next(g for g in (f"n{i}" for i in range(500)) if partition_for(g, 50) == partition_for(LONG, 50))

        def scenario() -> None:
            key, version, body = bodies(LONG)[api]
            with WireClient(broker.bootstrap_servers) as client:
                with pytest.raises(ConnectionError):
                    client.request(key, version, body)
            with WireClient(broker.bootstrap_servers) as client:
                key, version, body = bodies(neighbour)["OffsetCommit"]
                answer = client.request(key, version, body)
                assert answer.topics[0].partitions[0].error_code == 0

        import asyncio
        await asyncio.get_running_loop().run_in_executor(None, scenario)
        assert broker.groups.shards()[partition_for(LONG, 50)].unavailable is None


async def test_a_32767_byte_group_id_is_answered(tmp_path):
    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=0) as broker:
        def scenario() -> None:
            key, version, body = bodies("g" * 32767)["OffsetFetch"]
            with WireClient(broker.bootstrap_servers) as client:
                assert client.request(key, version, body).groups[0].error_code == 0

        import asyncio
        await asyncio.get_running_loop().run_in_executor(None, scenario)
