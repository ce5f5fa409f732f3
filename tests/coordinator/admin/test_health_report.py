"""`groupcoord health` against a real broker says what it checked: ApiVersions (and how many APIs), the
coordinator partitions by load state and the data directory with its partition logs — as JSON with --json."""

from __future__ import annotations

import argparse
import asyncio
import json

from groupcoord.coordinator.admin.cli import add_admin_commands


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="groupcoord")
    add_admin_commands(p.add_subparsers(dest="command", required=True))
    return p


def health(broker, capsys, *options: str) -> tuple[int, str]:
    ns = parser().parse_args(["health", "--bootstrap-server", broker.bootstrap_servers, *options])
    code = ns.func(ns)
    return code, capsys.readouterr().out


def test_health_json_reports_what_it_checked(groupcoord_broker, capsys):
    code, out = health(groupcoord_broker, capsys, "--metrics-port", str(groupcoord_broker.metrics_port), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["healthy"] and report["problems"] == []
    assert report["api_versions_version"] >= 3 and report["apis"] >= 40
    checked = report["checked"]
    assert checked["data_dir"] == str(groupcoord_broker.data_dir)
    assert checked["partition_logs"] >= 50  # __consumer_offsets' partitions at least
    shards = checked["coordinator_partitions"]
    assert shards["unavailable"] == 0 and shards["loaded"] + shards["loading"] == groupcoord_broker.config.offsets_topic_num_partitions


def test_health_text_lists_the_checks_and_says_what_it_could_not_check(groupcoord_broker, capsys):
    code, out = health(groupcoord_broker, capsys, "--metrics-port", str(groupcoord_broker.metrics_port))
    lines = out.splitlines()
    assert code == 0 and lines[0] == "ok"
    assert lines[1].startswith("checked: ApiVersions v") and "coordinator partitions" in lines[2]
    assert lines[3].startswith(f"checked: data dir {groupcoord_broker.data_dir}:")
    code, out = health(groupcoord_broker, capsys, "--metrics-port", "0")
    assert code == 0 and out.splitlines()[-1].startswith("not checked: data directory")
