"""The admin CLI end to end against the fake broker: arguments in, text/JSON and exit code out."""

from __future__ import annotations

import argparse
import asyncio
import json

import pytest

from groupcoord.coordinator.admin.cli import add_admin_commands

from .fake_broker import DEFAULT_RANGES, FakeBroker, FakeCluster, FakeGroup, FakeMember


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="groupcoord")
    add_admin_commands(p.add_subparsers(dest="command", required=True))
    return p


async def run(broker: FakeBroker, capsys, *argv: str) -> tuple[int, str, str]:
    ns = parser().parse_args([*argv, "--bootstrap-server", broker.bootstrap])
    code = await asyncio.to_thread(ns.func, ns)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def payments_cluster(state: str = "Stable") -> FakeCluster:
    members = [FakeMember("c-1", "consumer-1", "/10.0.0.1", [("orders", 0)])] if state == "Stable" else []
    return FakeCluster(
        topics={"orders": [(0, 10), (5, 20)]},
        groups={"payments": FakeGroup(state=state, members=members, offsets={("orders", 0): 4, ("orders", 1): 7})},
        offsets_by_time={("orders", 0, 1_706_702_400_000): 6},
    )


async def test_describe_shows_lag_per_partition(capsys):
    async with FakeBroker(payments_cluster()) as broker:
        code, out, _ = await run(broker, capsys, "groups", "describe", "payments")
    assert code == 0
    assert [line.split() for line in out.splitlines()[1:]] == [
        ["payments", "orders", "0", "4", "10", "6", "c-1", "/10.0.0.1", "consumer-1"],
        ["payments", "orders", "1", "7", "20", "13", "-", "-", "-"],
    ]


async def test_describe_json_and_the_empty_group_note(capsys):
    async with FakeBroker(payments_cluster("Empty")) as broker:
        code, out, _ = await run(broker, capsys, "groups", "describe", "payments", "--json")
        assert code == 0
        assert [(r["partition"], r["lag"], r["consumer_id"]) for r in json.loads(out)] == [(0, 6, None), (1, 13, None)]
        code, out, _ = await run(broker, capsys, "groups", "describe", "payments")
    assert out.splitlines()[0] == "Consumer group 'payments' has no active members."


async def test_describe_of_an_unknown_group_fails_with_exit_1(capsys):
    async with FakeBroker(payments_cluster()) as broker:
        code, out, err = await run(broker, capsys, "groups", "describe", "nobody")
    assert (code, out) == (1, "")
    assert err == "Error: Consumer group 'nobody' does not exist.\n"


async def test_unknown_group_reads_the_same_whether_the_broker_says_dead_or_group_id_not_found(capsys):
    ranges = {**DEFAULT_RANGES, 15: (0, 6)}
    async with FakeBroker(payments_cluster(), ranges=ranges) as broker:
        code, _, err = await run(broker, capsys, "groups", "describe", "nobody")
    assert (code, err) == (1, "Error: Consumer group 'nobody' does not exist.\n")
    assert (15, 6) in [(k, v) for k, v, *_ in broker.requests]


async def test_groups_list_filters_by_state(capsys):
    cluster = payments_cluster()
    cluster.groups["idle"] = FakeGroup()
    async with FakeBroker(cluster) as broker:
        code, out, _ = await run(broker, capsys, "groups", "list", "--state", "Empty", "--json")
    assert code == 0
    assert json.loads(out) == [{"group": "idle", "protocol_type": "consumer", "state": "Empty"}]


async def test_reset_is_refused_while_the_group_is_active(capsys):
    async with FakeBroker(payments_cluster("Stable")) as broker:
        code, _, err = await run(broker, capsys, "offsets", "reset", "--group", "payments", "--all-topics",
                                 "--to-earliest", "--execute")
    assert code == 1
    assert "Assignments can only be reset if the group 'payments' is inactive, but the current state is Stable." in err
    assert broker.commits == []


async def test_reset_dry_run_prints_the_plan_and_commits_nothing(capsys):
    async with FakeBroker(payments_cluster("Empty")) as broker:
        code, out, _ = await run(broker, capsys, "offsets", "reset", "--group", "payments", "--topic", "orders",
                                 "--to-datetime", "2024-01-31T12:00:00Z")
    assert code == 0
    assert [line.split() for line in out.splitlines()] == [
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
        ["payments", "orders", "0", "6"],
        ["payments", "orders", "1", "20"],
    ]
    assert broker.commits == []


async def test_reset_execute_commits_as_an_admin(capsys):
    async with FakeBroker(payments_cluster("Empty")) as broker:
        code, out, _ = await run(broker, capsys, "offsets", "reset", "--group", "payments", "--topic", "orders:1",
                                 "--shift-by", "-2", "--execute", "--json")
    assert code == 0
    assert json.loads(out)["offsets"] == [{"topic": "orders", "partition": 1, "current_offset": 7, "new_offset": 5}]
    assert broker.commits == [("payments", -1, "", {("orders", 1): 5})]


async def test_export_then_reset_from_the_file_restores_the_offsets(capsys, tmp_path):
    csv_path = tmp_path / "payments.csv"
    async with FakeBroker(payments_cluster("Empty")) as broker:
        code, _, _ = await run(broker, capsys, "offsets", "export", "--group", "payments", "--out", str(csv_path))
        assert code == 0
        broker.cluster.groups["payments"].offsets = {("orders", 0): 0, ("orders", 1): 5}
        code, _, _ = await run(broker, capsys, "offsets", "reset", "--group", "payments", "--from-file",
                               str(csv_path), "--execute")
    assert code == 0
    assert broker.cluster.groups["payments"].offsets == {("orders", 0): 4, ("orders", 1): 7}


async def test_delete_reports_success_and_failure(capsys):
    cluster = payments_cluster()
    cluster.groups["idle"] = FakeGroup()
    async with FakeBroker(cluster) as broker:
        code, out, err = await run(broker, capsys, "groups", "delete", "idle", "payments")
    assert code == 1
    assert out == "Deletion of requested consumer groups ('idle') was successful.\n"
    assert "group 'payments' could not be deleted due to: NON_EMPTY_GROUP" in err


async def test_topics_lifecycle(capsys):
    async with FakeBroker(FakeCluster()) as broker:
        assert (await run(broker, capsys, "topics", "create", "--topic", "clicks", "--partitions", "3"))[:2] == (
            0, "Created topic clicks.\n")
        code, out, _ = await run(broker, capsys, "topics", "describe", "--topic", "clicks", "--json")
        assert [p["partition"] for p in json.loads(out)[0]["partitions"]] == [0, 1, 2]
        code, _, err = await run(broker, capsys, "topics", "create", "--topic", "clicks")
        assert code == 1 and "TOPIC_ALREADY_EXISTS" in err
        assert (await run(broker, capsys, "topics", "delete", "--topic", "clicks"))[0] == 0
        code, out, _ = await run(broker, capsys, "topics", "list")
    assert out == ""


async def test_health_answers_ok(capsys):
    async with FakeBroker(FakeCluster()) as broker:
        code, out, _ = await run(broker, capsys, "health", "--metrics-port", "0")
        assert code == 0 and out.splitlines()[0] == "ok" and "checked: ApiVersions v" in out


def test_reset_needs_a_scope_and_exactly_one_strategy(capsys):
    with pytest.raises(SystemExit):
        parser().parse_args(["offsets", "reset", "--group", "g", "--all-topics", "--bootstrap-server", "h:1"])
    with pytest.raises(SystemExit):
        parser().parse_args(["offsets", "reset", "--group", "g", "--to-earliest", "--to-latest",
                             "--bootstrap-server", "h:1"])
