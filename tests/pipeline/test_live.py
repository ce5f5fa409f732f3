"""Live mode: `__consumer_offsets` over the Kafka protocol through Spark's Kafka source, from the daemon and
from Apache Kafka 4.3.1, with no disk access. `snapshot --bootstrap-server` and `watch --once` must agree
with what OffsetFetch answers for the same groups, and the watch's lag with ListOffsets.

Every command, for both brokers, runs through `groupcoord pipeline ...` in this process, on the suite's
session (tests/pipeline/conftest.py): the Kafka source's jars are resolved into the Ivy cache by
`spark.jars.packages` only when a session starts, so with this module selected the suite's session starts
with the connector the CLI picks (`kafka_source.kafka_package`), and no second driver JVM is started for it.
test_the_live_commands_ask_for_the_kafka_source checks that the commands ask for it themselves.
"""

from __future__ import annotations

import asyncio
import csv
import io
import time
import uuid
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.pipeline.conftest import KAFKA_SOURCE_MISSING
from tests.pipeline.small_data import SMALL_DATA_FLAGS

pytestmark = pytest.mark.timeout(900)
AT = "2100-01-01T00:00:00Z"


def _commit_story(bootstrap: str) -> dict[str, str]:
    """Two plain groups (one commits twice: the later offsets stand) and a transactional producer whose first
    transaction commits its group's offsets and second aborts. Returns {role: group}."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    tag = uuid.uuid4().hex[:8]
    topic = f"live-{tag}"
    groups = {"twice": f"live-twice-{tag}", "once": f"live-once-{tag}", "txn": f"live-txn-{tag}"}
    admin = AdminClient({"bootstrap.servers": bootstrap})  # held: a collected client cancels its futures
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for n in range(30):
        producer.produce(topic, b"x", partition=n % 2)
    assert producer.flush(30) == 0

    def commit(group, offsets):
        """A retriable error, or the coordinator still loading or moved (NOT_COORDINATOR, which librdkafka
        does not mark retriable on an explicit commit; Kafka and a daemon that just started both answer it),
        is retried, as clients do."""
        from confluent_kafka import KafkaError, KafkaException

        coordinator_errors = {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                              KafkaError.COORDINATOR_NOT_AVAILABLE}

        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()],
                                    asynchronous=False)
                    return
                except KafkaException as exc:
                    error = exc.args[0]
                    if not (error.retriable() or error.code() in coordinator_errors) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        finally:
            consumer.close()

    commit(groups["twice"], {0: 4, 1: 6})
    commit(groups["twice"], {0: 9})
    commit(groups["once"], {1: 15})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": groups["txn"]})
    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"live-tx-{tag}"})
    txn.init_transactions(30)
    for offsets, end in (({0: 5, 1: 7}, txn.commit_transaction), ({0: 12}, txn.abort_transaction)):
        txn.begin_transaction()
        txn.produce(topic, b"out", partition=0)
        txn.send_offsets_to_transaction([TopicPartition(topic, p, o) for p, o in offsets.items()],
                                        consumer.consumer_group_metadata(), 30)
        end(30)
    consumer.close()
    return groups


def _offset_fetch(bootstrap: str, groups: dict[str, str]):
    """OffsetFetch per group and ListOffsets for their partitions, through the project's admin client."""
    from groupcoord.coordinator.admin.client import AdminClient
    from groupcoord.coordinator.admin.operations import LATEST_TIMESTAMP, fetch_committed, list_offsets

    async def ask():
        async with AdminClient(bootstrap) as client:
            committed = {g: {tp: c.offset for tp, c in (await fetch_committed(client, g)).items()}
                         for g in groups.values()}
            wanted = {tp for offsets in committed.values() for tp in offsets}
            return committed, await list_offsets(client, wanted, LATEST_TIMESTAMP)

    return asyncio.run(ask())


def _live_runs(bootstrap: str, out) -> list[list[str]]:
    return [["pipeline", "snapshot", "--bootstrap-server", bootstrap, "--out", str(out / "snapshot"), "--at", AT,
             "--master", "local[2]", "--driver-memory", "1g", *SMALL_DATA_FLAGS],
            ["pipeline", "watch", "--bootstrap-server", bootstrap, "--out", str(out / "watch"), "--once",
             "--master", "local[2]", "--driver-memory", "1g", *SMALL_DATA_FLAGS]]


@dataclass
class LiveAnswers:
    """One broker's story, what OffsetFetch / ListOffsets say about it, and where the commands wrote."""

    groups: dict[str, str]
    committed: dict
    log_end: dict
    out: Path


def _run_commands(runs: list[list[str]]) -> SimpleNamespace:
    """`groupcoord ...` for each argv in turn, in this process (on the suite's session), stopping at the first
    that fails; its exit code and what it printed, as a child's would be."""
    from groupcoord.coordinator.ops.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(stdout), redirect_stderr(stderr):
        for argv in runs:
            code = main(argv)
            if code:
                break
    return SimpleNamespace(returncode=code, stdout=stdout.getvalue(), stderr=stderr.getvalue())


@pytest.fixture(scope="module")
def live(request, tmp_path_factory, spark):
    """The daemon and (when its test is selected and Kafka can run) the Kafka 4.3.1 reference, each given the
    commit story, then every command for both on the suite's session (which loaded the Kafka source for
    them). Yields {"daemon": LiveAnswers, "kafka": LiveAnswers or the skip reason, "result": the CLI run}."""
    from tests.support.daemon import Daemon

    if KAFKA_SOURCE_MISSING:
        pytest.fail(KAFKA_SOURCE_MISSING[0])

    root = tmp_path_factory.mktemp("live")
    daemon = Daemon(root / "daemon").start()
    try:
        brokers: dict[str, str | None] = {"daemon": daemon.bootstrap_servers, "kafka": None}
        answers: dict = {"kafka": "the Kafka test is not selected"}
        if any(item.name == "test_live_mode_against_kafka_4_3_agrees_with_offset_fetch" for item in request.session.items):
            try:
                brokers["kafka"] = request.getfixturevalue("kafka_reference")
            except pytest.skip.Exception as exc:
                answers["kafka"] = str(exc)
        runs = []
        for name, bootstrap in brokers.items():
            if bootstrap is None:
                continue
            groups = _commit_story(bootstrap)
            committed, log_end = _offset_fetch(bootstrap, groups)
            answers[name] = LiveAnswers(groups, committed, log_end, root / name)
            runs += _live_runs(bootstrap, root / name)
        answers["result"] = _run_commands(runs)
        yield answers
    finally:
        daemon.terminate()


def _rows(path):
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _check_against_offset_fetch(live: dict, broker: str) -> None:
    answers = live[broker]
    if isinstance(answers, str):
        pytest.skip(answers)
    groups, committed, log_end, tmp_path = answers.groups, answers.committed, answers.log_end, answers.out
    assert committed[groups["twice"]] and committed[groups["txn"]]  # the story happened
    result = live["result"]
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"-> {tmp_path / 'watch' / 'watch_groups.csv'}" in result.stderr and "batch 0:" in result.stdout

    ours = set(groups.values())
    snapshot = {}
    for row in _rows(tmp_path / "snapshot" / "snapshot.csv"):
        if row["group"] in ours:
            snapshot.setdefault(row["group"], {})[(row["topic"], int(row["partition"]))] = int(row["offset"])
    assert snapshot == committed

    watched = {}
    for row in _rows(tmp_path / "watch" / "watch_partitions.csv"):
        if row["group"] in ours:
            tp = (row["topic"], int(row["partition"]))
            watched.setdefault(row["group"], {})[tp] = int(row["committed_offset"])
            # nothing is produced between ListOffsets above and the watch: the same log end, the same lag
            assert int(row["log_end_offset"]) == log_end[tp]
            assert int(row["lag"]) == log_end[tp] - committed[row["group"]][tp]
            assert row["status"] in {"OK", "WARN", "STOP", "STALL", "REWIND"}
    assert watched == committed
    group_rows = {r["group"]: r for r in _rows(tmp_path / "watch" / "watch_groups.csv") if r["group"] in ours}
    assert set(group_rows) == ours
    assert int(group_rows[groups["twice"]]["commits"]) == 3  # every commit counted, in log order
    assert int(group_rows[groups["txn"]]["commits"]) == 2  # the aborted transaction's offset never arrives


def test_live_mode_against_the_daemon_agrees_with_offset_fetch(live):
    _check_against_offset_fetch(live, "daemon")


@pytest.mark.reference
def test_live_mode_against_kafka_4_3_agrees_with_offset_fetch(live):
    _check_against_offset_fetch(live, "kafka")


def test_the_live_commands_ask_for_the_kafka_source():
    """The commands above run on a session that already has the connector; a user's run starts its own, and
    the live commands are what put the connector in it (the data-directory commands do not)."""
    from groupcoord.pipeline.cli import _session_settings, build_parser
    from groupcoord.pipeline.kafka_source import kafka_package

    parser = build_parser()
    live = parser.parse_args(["snapshot", "--bootstrap-server", "h:9092", "--out", "o", "--at", AT,
                              "--conf", "spark.jars.packages=org.example:extra:1"])
    watch = parser.parse_args(["watch", "--bootstrap-server", "h:9092", "--once"])
    files = parser.parse_args(["snapshot", "--data-dir", "d", "--out", "o", "--at", AT])
    assert _session_settings(live, live=True).extra["spark.jars.packages"] == f"org.example:extra:1,{kafka_package()}"
    assert _session_settings(watch, live=True).extra["spark.jars.packages"] == kafka_package()
    assert "spark.jars.packages" not in _session_settings(files, live=False).extra
