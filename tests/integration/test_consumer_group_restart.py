"""A KIP-848 group survives a SIGKILL of the daemon: the restarted broker replays the ConsumerGroup* records
into the same group (epochs, members, assignments, a static member away at epoch -2, offsets) and goes on
from there."""

from __future__ import annotations

import uuid

import pytest

from tests.support.daemon import Daemon
from tests.support.wire import WireClient

pytestmark = pytest.mark.timeout(120)

HEARTBEAT = 68
DESCRIBE = 69
NULLS = {"instance_id": None, "rack_id": None, "rebalance_timeout": -1, "subscribed_topic_names": None,
         "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": None}


def heartbeat(wire, group, member, epoch, **fields):
    return wire.request(HEARTBEAT, 1, {**NULLS, "group_id": group, "member_id": member, "member_epoch": epoch, **fields})


def join(wire, group, member, topic, **fields):
    return heartbeat(wire, group, member, 0, subscribed_topic_names=[topic], topic_partitions=[],
                     rebalance_timeout=30_000, **fields)


def snapshot(wire, group):
    g = wire.request(DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False}).groups[0]
    members = sorted((m.member_id, m.member_epoch, m.instance_id,
                      tuple(sorted((tp.topic_name, tuple(sorted(tp.partitions))) for tp in m.assignment.topic_partitions)),
                      tuple(sorted((tp.topic_name, tuple(sorted(tp.partitions))) for tp in m.target_assignment.topic_partitions)))
                     for m in g.members)
    return g.error_code, g.group_state, g.group_epoch, g.assignment_epoch, members


def test_a_consumer_group_is_the_same_after_a_sigkill(tmp_path):
    daemon = Daemon(tmp_path / "data", fsync="always").start()
    try:
        group, topic = f"kip848-restart-{uuid.uuid4().hex[:6]}", "kip848-restart-topic"
        with WireClient(daemon.bootstrap_servers) as wire:
            created = wire.request(19, 7, {"topics": [{"name": topic, "num_partitions": 4, "replication_factor": 1,
                                                       "assignments": [], "configs": []}],
                                           "timeout": 10_000, "validate_only": False})
            topic_id = created.topics[0].topic_id
            join(wire, group, "member-a", topic)
            join(wire, group, "member-b", topic, instance_id="instance-b")
            r = heartbeat(wire, group, "member-a", 2)  # told to revoke half
            kept = sorted(r.assignment.topic_partitions[0].partitions)
            heartbeat(wire, group, "member-a", 2, topic_partitions=[{"topic_id": topic_id, "partitions": kept}])
            heartbeat(wire, group, "member-b", 3)
            commit = wire.request(8, 9, {"group_id": group, "generation_id_or_member_epoch": 3, "member_id": "member-a",
                                         "group_instance_id": None, "topics": [{"name": topic, "partitions": [
                                             {"partition_index": kept[0], "committed_offset": 42,
                                              "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
            assert commit.topics[0].partitions[0].error_code == 0
            assert heartbeat(wire, group, "member-b", -2, instance_id="instance-b").member_epoch == -2
            before = snapshot(wire, group)
        assert before[:4] == (0, "Reconciling", 3, 3)

        daemon.kill()
        daemon.start()
        with WireClient(daemon.bootstrap_servers) as wire:
            assert snapshot(wire, group) == before
            fetched = wire.request(9, 9, {"groups": [{"group_id": group, "member_id": "member-a", "member_epoch": 3,
                                                      "topics": [{"name": topic, "partition_indexes": [kept[0]]}]}],
                                          "require_stable": False})
            assert fetched.groups[0].topics[0].partitions[0].committed_offset == 42
            # The static member's instance comes back under a new id and gets what it had, at the same epoch.
            back = join(wire, group, "member-b2", topic, instance_id="instance-b")
            assert back.error_code == 0 and back.member_epoch == 3
            assert sorted(back.assignment.topic_partitions[0].partitions) == sorted(set(range(4)) - set(kept))
            # A new member continues the epochs where they were.
            assert join(wire, group, "member-c", topic).member_epoch == 4
    finally:
        daemon.kill()
