"""Kafka's own command-line tools against groupcoord and against Kafka 4.3.1, outputs compared.

Each story (kafka_tool_scenarios.py) runs once against each broker; the normalised transcripts must be
equal line for line. The drivers of Kafka's system tests (verifiable producer and consumer) and the perf
tools are checked for what they promise on each broker: every acknowledged record consumed and committed
across a rebalance; every record sent and read back.

Every tool start is a JVM (~1 s on a quiet machine, more on a busy one), so the default run keeps a bounded
subset — kafka-consumer-groups with the console clients and three reset modes, the client-quota commands,
against both brokers, and the verifiable drivers on groupcoord — and ``GROUPCOORD_FULL_TESTS=1`` adds the rest:
kafka-topics, kafka-configs, kafka-delete-records, kafka-log-dirs, kafka-get-offsets, kafka-transactions
describe-producers, every reset mode (with --export and --from-file), the verifiable drivers on Kafka, the perf
tools on both. To keep it short the two brokers' stories run side by side, one groupcoord daemon serves the
module (every name carries its run's suffix), and each tool starts from a class-data-sharing archive of its
classes (kafka_cli.class_data_sharing). Every command run lands in the tool table (kafka_tool_table.py),
printed at the end of the session.
"""

from __future__ import annotations

import difflib
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.reference.kafka_cli import JVM, TOOLS, KafkaCli, archive_written, class_data_sharing
from tests.reference.kafka_distribution import ReferenceUnavailable, ensure_kafka, ensure_kafka_tools
from tests.reference.kafka_tool_scenarios import STORIES, Story
from tests.reference.kafka_tool_table import TABLE, checked
from tests.support.daemon import Daemon

pytestmark = [pytest.mark.reference, pytest.mark.java, pytest.mark.timeout(900)]

FULL = bool(os.environ.get("GROUPCOORD_FULL_TESTS"))
LONG_STORIES = {"topics", "delete_records_and_log_dirs", "configs"}
full_only = pytest.mark.skipif(not FULL, reason="long Kafka-tool run: set GROUPCOORD_FULL_TESTS=1")


@pytest.fixture(scope="session")
def distributions():
    try:
        return ensure_kafka_tools(), ensure_kafka()
    except ReferenceUnavailable as exc:
        pytest.skip(reason=f"Kafka tools unavailable: {exc}")


@pytest.fixture(scope="module")
def tools_daemon(tmp_path_factory):
    """One `groupcoord serve` for the module, as the Kafka reference is one for the session: every story and
    driver names its topics and groups with its own run suffix, so they do not see each other."""
    daemon = Daemon(tmp_path_factory.mktemp("tools-daemon") / "data").start()
    yield daemon
    daemon.kill()


@pytest.fixture
def brokers(distributions, tools_daemon, kafka_reference) -> dict[str, KafkaCli]:
    tools, broker = distributions
    return {"groupcoord": KafkaCli(tools, broker, tools_daemon.bootstrap_servers),
            "kafka": KafkaCli(tools, broker, kafka_reference)}


def _tell(story_name: str, cli: KafkaCli) -> Story:
    story = Story(cli, f"-{uuid.uuid4().hex[:8]}", full=FULL)
    STORIES[story_name](story)
    return story


@pytest.mark.parametrize("story_name", [
    pytest.param(name, marks=[full_only] if name in LONG_STORIES else []) for name in STORIES])
def test_the_tools_print_what_they_print_against_kafka(brokers, story_name):
    # The two brokers' stories are independent (each its own names): told side by side, the JVM starts of
    # one overlap the other's waits for its broker.
    with ThreadPoolExecutor(max_workers=len(brokers)) as pool:
        telling = {broker: pool.submit(_tell, story_name, cli) for broker, cli in brokers.items()}
        told = {broker: future.result() for broker, future in telling.items()}
    TABLE.record_story(story_name, told)
    ours, theirs = told["groupcoord"].transcript, told["kafka"].transcript
    assert [command for command, _ in ours] == [command for command, _ in theirs]
    differences = []
    for (command, mine), (_, kafkas) in zip(ours, theirs):
        if mine != kafkas:
            diff = "\n".join(difflib.unified_diff(kafkas.splitlines(), mine.splitlines(), "kafka", "groupcoord",
                                                  lineterm=""))
            differences.append(f"$ {command}\n{diff}")
    for broker, story in told.items():
        for run in story.runs:
            print(f"[{broker}] exit {run.returncode}: {run.command}")
    assert not differences, "\n\n".join(differences)


# ---- the system-test drivers ------------------------------------------------------------------

class Events:
    """A verifiable tool's JSON event lines, read as they come."""

    def __init__(self, process: subprocess.Popen, sharing: list[str]) -> None:
        self.process = process
        self.sharing = sharing  # the class-data-sharing options it was started with
        self.events: list[dict] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            if line.startswith("{"):
                try:
                    self.events.append(json.loads(line))
                except ValueError:
                    pass

    def named(self, name: str) -> list[dict]:
        return [e for e in list(self.events) if e.get("name") == name]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._thread.join(timeout=10)
        archive_written(self.sharing)


def _start(cli: KafkaCli, tool: str, *args: str) -> Events:
    main = TOOLS[tool][1]
    sharing = class_data_sharing(cli.tools.classpath, main)
    process = subprocess.Popen(["java", *JVM, *sharing, "-cp", cli.tools.classpath, main, "--bootstrap-server",
                                cli.bootstrap, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return Events(process, sharing)


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


RECORDS = 3000
PARTITIONS = 3
VERIFIABLE = (f"kafka-verifiable-producer --max-messages {RECORDS} --acks -1 --throughput 1000, and 2 "
              f"kafka-verifiable-consumer --group-id <group> (the second joins mid-way: a rebalance)")


@pytest.mark.parametrize("broker", ["groupcoord", pytest.param("kafka", marks=full_only)])
def test_verifiable_consumers_consume_every_acknowledged_record_across_a_rebalance(brokers, broker):
    """Kafka's system-test drivers: the producer's acknowledged offsets are all consumed by a group of two
    verifiable consumers, the second joining half way (a rebalance), and the group's commits reach the end."""
    with checked("verifiable", VERIFIABLE, broker) as outcome:
        ends = _verify(brokers[broker])
        outcome["text"] = (f"{RECORDS} acked; every one consumed by 2 members across a rebalance; "
                           f"commits reached the ends {dict(sorted(ends.items()))}")
    print(f"[{broker}] {RECORDS} acknowledged, consumed by 2 members across a rebalance, commits at {ends}")


def _verify(cli: KafkaCli) -> dict[int, int]:
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"verified-{suffix}", f"verifiers-{suffix}"
    cli.run("kafka-topics", "--create", "--topic", topic, "--partitions", str(PARTITIONS)).ok()
    producer = _start(cli, "kafka-verifiable-producer", "--topic", topic, "--max-messages", str(RECORDS),
                      "--throughput", "1000", "--acks", "-1")
    consumer_args = ("--topic", topic, "--group-id", group, "--reset-policy", "earliest", "--verbose")
    first = _start(cli, "kafka-verifiable-consumer", *consumer_args)
    second = None
    try:
        _wait(lambda: sum(1 for _ in first.named("record_data")) >= RECORDS // 3, 120, "the first consumer's records")
        second = _start(cli, "kafka-verifiable-consumer", *consumer_args)
        _wait(lambda: producer.process.poll() is not None, 120, "the producer to finish")
        producer.stop()
        acked = {(e["partition"], e["offset"]) for e in producer.named("producer_send_success")}
        [summary] = producer.named("tool_data")
        assert summary["acked"] == RECORDS == len(acked)
        ends = {p: max(o for q, o in acked if q == p) + 1 for p, _ in acked}

        def consumed() -> set[tuple[int, int]]:
            return {(e["partition"], e["offset"]) for c in (first, second) for e in c.named("record_data")}

        def committed() -> dict[int, int]:
            last: dict[int, int] = {}
            for c in (first, second):
                for event in c.named("offsets_committed"):
                    if event.get("success"):
                        for o in event["offsets"]:
                            last[o["partition"]] = max(last.get(o["partition"], 0), o["offset"])
            return last

        _wait(lambda: acked <= consumed() and all(committed().get(p, 0) >= end for p, end in ends.items()), 180,
              "every acknowledged record consumed and committed")
        _wait(lambda: any(e["partitions"] for e in second.named("partitions_assigned")), 60,
              f"the second consumer's partitions (its events: {sorted({e['name'] for e in second.events})})")
        assert first.named("partitions_revoked") or len(first.named("partitions_assigned")) > 1, \
            "the first consumer never saw the rebalance"
    finally:
        for events in (producer, first, second):
            if events is not None:
                events.stop()
    return ends


@full_only
@pytest.mark.parametrize("broker", ["groupcoord", "kafka"])
def test_the_perf_tools_send_and_read_every_record(brokers, broker):
    cli = brokers[broker]
    records = 20000
    topic, group = f"perf-{uuid.uuid4().hex[:8]}", f"perf-readers-{uuid.uuid4().hex[:8]}"
    cli.run("kafka-topics", "--create", "--topic", topic, "--partitions", "3").ok()
    with checked("perf", f"kafka-producer-perf-test --num-records {records} --record-size 100 --throughput -1 "
                 "--producer-props acks=all", broker) as outcome:
        sent = cli.run("kafka-producer-perf-test", "--topic", topic, "--num-records", str(records), "--record-size",
                       "100", "--throughput", "-1", "--producer-props", f"bootstrap.servers={cli.bootstrap}",
                       "acks=all", bootstrap_flag=None).ok()
        summary = [line for line in sent.stdout.splitlines() if "records sent" in line][-1]
        assert summary.startswith(f"{records} records sent"), summary
        outcome["text"] = f"exit 0, {records} records sent"
    with checked("perf", f"kafka-consumer-perf-test --num-records {records} --group <group> --timeout 60000",
                 broker) as outcome:
        read = cli.run("kafka-consumer-perf-test", "--topic", topic, "--num-records", str(records), "--group", group,
                       "--timeout", "60000").ok()
        header, values = [line for line in read.stdout.splitlines() if "," in line][-2:]
        row = dict(zip([h.strip() for h in header.split(",")], [v.strip() for v in values.split(",")]))
        assert int(row["data.consumed.in.nMsg"]) == records, row
        outcome["text"] = f"exit 0, {records} records consumed"
    print(f"[{broker}] producer-perf-test: {summary}")
    print(f"[{broker}] consumer-perf-test: {row['data.consumed.in.nMsg']} records, {row['nMsg.sec']} records/s, "
          f"rebalance {row['rebalance.time.ms']} ms")
