"""`groupcoord groups` on share groups, against a running broker: kafka-share-groups.sh's columns."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.conformance import requests as rq
from tests.conformance.wire import Connection
from tests.coordinator.admin.test_commands import parser

pytestmark = pytest.mark.timeout(60)


async def run(bootstrap: str, capsys, *argv: str) -> tuple[int, str, str]:
    ns = parser().parse_args([*argv, "--bootstrap-server", bootstrap])
    code = await asyncio.to_thread(ns.func, ns)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def _share_member(bootstrap: str, group: str, member: str, topic: str) -> None:
    """A share member that joins, then heartbeats until the broker assigned it every partition."""
    conn = await Connection.open(bootstrap)
    response = await conn.send(rq.share_group_heartbeat(group, member, 0, topics=(topic,)))
    for _ in range(50):
        response = await conn.send(rq.share_group_heartbeat(group, member, int(response.member_epoch)))
        if response.assignment is not None and response.assignment.topic_partitions:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no assignment")


async def test_share_groups_are_listed_and_described_like_kafka_share_groups(groupcoord_broker, capsys):
    bootstrap = groupcoord_broker.bootstrap_servers
    admin = await Connection.open(bootstrap)
    await admin.send(rq.create_topic("queue", 2))
    await _share_member(bootstrap, "workers", "m-1", "queue")

    code, out, _ = await run(bootstrap, capsys, "groups", "list", "--type", "share")
    assert code == 0
    assert [line.split() for line in out.splitlines()] == [["GROUP", "TYPE", "STATE"], ["workers", "share", "Stable"]]

    code, out, _ = await run(bootstrap, capsys, "groups", "describe", "workers", "--members")
    assert code == 0
    header, row = [line.split() for line in out.splitlines()]
    assert header == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT"]
    assert row[0:2] == ["workers", "m-1"] and row[4:] == ["2", "3", "queue:0,1"]

    code, out, _ = await run(bootstrap, capsys, "groups", "describe", "workers", "--state")
    header, row = out.splitlines()
    assert header.split() == ["GROUP", "COORDINATOR", "(ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"]
    assert row.split()[0] == "workers" and row.split()[-4:] == ["Stable", "3", "3", "1"]

    code, out, _ = await run(bootstrap, capsys, "groups", "describe", "workers", "--members", "--json")
    assert json.loads(out)[0]["assignment"] == [{"topic": "queue", "partition": 0}, {"topic": "queue", "partition": 1}]

    code, out, _ = await run(bootstrap, capsys, "groups", "describe", "workers")
    assert code == 0
    header, *rows = [line.split() for line in out.splitlines()]
    assert header == ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG"]
    assert [row[:3] for row in rows] == [["workers", "queue", "0"], ["workers", "queue", "1"]]

    code, out, _ = await run(bootstrap, capsys, "groups", "list", "--type", "consumer")
    assert out.splitlines() == ["GROUP TYPE STATE"]
