"""The admin CLI against a live broker: groupcoord, and the real Kafka reference when it is available.

Running the same scenario against both is the point: an operator's scripts must not be able to tell them apart.
"""

from __future__ import annotations

import io
import json
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer

from groupcoord.coordinator.admin.cli import run_command
from groupcoord.coordinator.ops.cli import build_parser
from tests.support.kafka_python_members import commit_when_settled, poll_until, subscribed_consumer

MESSAGES_PER_PARTITION = 5


@pytest.fixture(params=["groupcoord", pytest.param("kafka", marks=pytest.mark.reference)])
def bootstrap(request: pytest.FixtureRequest) -> str:
    """The same admin scenarios against groupcoord and against a real Kafka broker."""
    if request.param == "groupcoord":
        return request.getfixturevalue("groupcoord_broker").bootstrap_servers
    return request.getfixturevalue("kafka_reference")


def cli(bootstrap: str, *argv: str) -> tuple[int, str, str]:
    """Run `groupcoord <argv>` through the real parser, with the command's own output kept apart from the
    embedded broker's log lines (which share the process's stdout)."""
    ns = build_parser().parse_args([*argv, "--bootstrap-server", bootstrap])
    out, err = io.StringIO(), io.StringIO()
    code = run_command(ns.admin_command, ns, out, err)
    return code, out.getvalue(), err.getvalue()


def unique(name: str) -> str:
    """Names unique per test run: the Kafka reference broker is shared between tests."""
    return f"{name}-{time.monotonic_ns()}"


def prepare_topic(bootstrap: str, topic: str) -> None:
    code, _, err = cli(bootstrap, "topics", "create", "--topic", topic, "--partitions", "2")
    assert code == 0, err
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(2 * MESSAGES_PER_PARTITION):
        producer.send(topic, f"v{i}".encode(), partition=i % 2)
    producer.flush(10)
    producer.close()


def join(bootstrap: str, topic: str, group: str, client_id: str) -> KafkaConsumer:
    consumer = subscribed_consumer(bootstrap, topic, group, client_id)
    poll_until([consumer], lambda: bool(consumer.assignment()))
    return consumer


def describe(bootstrap: str, group: str) -> list[dict]:
    code, out, err = cli(bootstrap, "groups", "describe", group, "--json")
    assert code == 0, err
    return json.loads(out)


def test_describe_shows_the_live_groups_offsets_and_lag(bootstrap):
    topic, group = unique("orders"), unique("payments")
    prepare_topic(bootstrap, topic)
    consumer = join(bootstrap, topic, group, "payments-worker")
    try:
        commit_when_settled(consumer, topic, {0: 2, 1: 1})
        rows = describe(bootstrap, group)
        code, out, _ = cli(bootstrap, "groups", "list", "--state", "Stable", "--json")
        listed = {g["group"]: g["state"] for g in json.loads(out)}
    finally:
        consumer.close()
    assert [(r["topic"], r["partition"], r["current_offset"], r["log_end_offset"], r["lag"]) for r in rows] == [
        (topic, 0, 2, MESSAGES_PER_PARTITION, MESSAGES_PER_PARTITION - 2),
        (topic, 1, 1, MESSAGES_PER_PARTITION, MESSAGES_PER_PARTITION - 1),
    ]
    assert {r["client_id"] for r in rows} == {"payments-worker"}
    assert all(r["consumer_id"].startswith("payments-worker-") for r in rows)
    assert {r["host"] for r in rows} == {"/127.0.0.1"}
    assert listed.get(group) == "Stable"
    assert cli(bootstrap, "groups", "describe", unique("nobody"))[0] == 1


def test_offsets_reset_is_refused_while_active_then_planned_and_executed(bootstrap, tmp_path):
    topic, group = unique("orders"), unique("payments")
    prepare_topic(bootstrap, topic)
    consumer = join(bootstrap, topic, group, "resetter")
    try:
        commit_when_settled(consumer, topic, {0: 4, 1: 3})
        code, _, err = cli(bootstrap, "offsets", "reset", "--group", group, "--topic", topic,
                           "--to-earliest", "--execute")
        assert code == 1
        assert f"Assignments can only be reset if the group '{group}' is inactive" in err
    finally:
        consumer.close()  # LeaveGroup: the group becomes Empty at once

    code, out, err = cli(bootstrap, "offsets", "reset", "--group", group, "--topic", f"{topic}:0",
                         "--to-earliest")
    assert code == 0, err
    assert out.splitlines()[1].split() == [group, topic, "0", "0"]
    assert [r["current_offset"] for r in describe(bootstrap, group)] == [4, 3]  # a dry run changes nothing

    exported = tmp_path / "before.csv"
    assert cli(bootstrap, "offsets", "export", "--group", group, "--out", str(exported))[0] == 0

    code, _, err = cli(bootstrap, "offsets", "reset", "--group", group, "--all-topics", "--shift-by", "-10",
                       "--execute")
    assert code == 0, err
    assert [r["current_offset"] for r in describe(bootstrap, group)] == [0, 0]

    code, _, err = cli(bootstrap, "offsets", "reset", "--group", group, "--from-file", str(exported),
                       "--execute")
    assert code == 0, err
    assert [r["current_offset"] for r in describe(bootstrap, group)] == [4, 3]

    code, out, _ = cli(bootstrap, "groups", "delete", group)
    assert (code, out) == (0, f"Deletion of requested consumer groups ('{group}') was successful.\n")
    code, _, _ = cli(bootstrap, "topics", "delete", "--topic", topic)
    assert code == 0
