"""Stories told with Kafka's own command-line tools; each returns the normalised transcript of what the tools
printed, so the same story against groupcoord and against Kafka 4.3.1 can be compared line by line.

Every name carries the run's suffix (the Kafka reference is shared by the whole session); ``normalise``
removes it again, with ids, hosts and times.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Callable

from tests.reference.kafka_cli import KafkaCli, ToolRun, normalise

Transcript = list[tuple[str, str]]


class Story:
    def __init__(self, cli: KafkaCli, suffix: str, full: bool = True) -> None:
        self.full = full  # False: the bounded subset of the default test run
        self.cli = cli
        self.suffix = suffix
        self.transcript: Transcript = []
        self.exits: list[int] = []  # the exit code behind each transcript entry (the tool table reports them)
        self.runs: list[ToolRun] = []
        self.redactions: dict[str, str] = {}  # run-local paths in commands, shown as their labels

    def name(self, base: str) -> str:
        return f"{base}{self.suffix}"

    def shown(self, text: str) -> str:
        for value, label in self.redactions.items():
            text = text.replace(value, label)
        return normalise(text.replace(self.cli.bootstrap, "<bootstrap>"), self.suffix)

    def note(self, command: str, text: str, returncode: int) -> None:
        """A transcript entry made of several runs or of a part of a run's output."""
        self.transcript.append((command, text))
        self.exits.append(returncode)

    def run(self, tool: str, *args: str, record: bool = True, expect_ok: bool = True, sort: bool = False,
            keep: Callable[[str], bool] | None = None, **options) -> ToolRun:
        done = self.cli.run(tool, *args, **options)
        self.runs.append(done)
        if expect_ok:
            done.ok()
        if record:
            text = self.shown(done.stdout if expect_ok else done.output)
            lines = [line for line in text.splitlines() if keep is None or keep(line)]
            if sort:
                lines.sort()
            self.note(self.shown(done.command), "\n".join(lines), done.returncode)
        return done


def _mine(story: Story) -> Callable[[str], bool]:
    return lambda line: story.suffix in line or not line.strip()


def topics(story: Story) -> None:
    orders = story.name("orders")
    story.run("kafka-topics", "--create", "--topic", orders, "--partitions", "3", "--replication-factor", "1")
    story.run("kafka-topics", "--create", "--topic", orders, "--partitions", "3", expect_ok=False,
              keep=lambda line: "already exists" in line)
    story.run("kafka-topics", "--describe", "--topic", orders)
    story.run("kafka-topics", "--alter", "--topic", orders, "--partitions", "5")
    story.run("kafka-topics", "--describe", "--topic", orders)
    story.run("kafka-topics", "--alter", "--topic", orders, "--partitions", "2", expect_ok=False,
              keep=lambda line: "Error" in line or "partitions" in line.lower())
    story.run("kafka-topics", "--create", "--topic", story.name("compacted"), "--partitions", "1",
              "--config", "cleanup.policy=compact", "--config", "retention.ms=3600000")
    story.run("kafka-topics", "--describe", "--topic", story.name("compacted"))
    listed = story.run("kafka-topics", "--list", record=False)
    story.note("kafka-topics --list (this run's)",
               "\n".join(sorted(normalise(line, story.suffix) for line in listed.stdout.splitlines()
                                if story.suffix in line)), listed.returncode)
    story.run("kafka-topics", "--delete", "--topic", story.name("compacted"))
    story.run("kafka-topics", "--describe", "--topic", story.name("missing"), expect_ok=False,
              keep=lambda line: "Error" in line or "does not exist" in line)


def _produce_lines(story: Story, topic: str, count: int, keyed: bool = True) -> None:
    lines = "".join(f"k{i % 3}:value-{i}\n" if keyed else f"value-{i}\n" for i in range(count))
    args = ["--topic", topic] + (["--property", "parse.key=true", "--property", "key.separator=:"] if keyed else [])
    story.run("kafka-console-producer", *args, input=lines)


def console_and_groups(story: Story) -> None:
    topic, group = story.name("events"), story.name("readers")
    story.run("kafka-topics", "--create", "--topic", topic, "--partitions", "2")
    _produce_lines(story, topic, 12)
    story.run("kafka-console-consumer", "--topic", topic, "--group", group, "--from-beginning", "--max-messages",
              "12", "--property", "print.key=true", "--property", "print.partition=true", sort=True)
    story.run("kafka-consumer-groups", "--list", keep=_mine(story))
    story.run("kafka-consumer-groups", "--describe", "--group", group, sort=True)
    story.run("kafka-consumer-groups", "--describe", "--group", group, "--offsets", sort=True)
    story.run("kafka-consumer-groups", "--describe", "--group", group, "--members")
    story.run("kafka-consumer-groups", "--describe", "--group", group, "--state")
    story.run("kafka-consumer-groups", "--describe", "--group", story.name("nobody"), expect_ok=False,
              keep=lambda line: "does not exist" in line or "Error" in line)

    def reset(*how: str) -> None:
        story.run("kafka-consumer-groups", "--reset-offsets", "--group", group, "--topic", topic, *how, "--execute",
                  sort=True)

    story.run("kafka-consumer-groups", "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
              "--dry-run", sort=True)
    reset("--to-earliest")
    reset("--shift-by", "1")
    if story.full:
        reset("--to-latest")
        reset("--to-offset", "2")
        reset("--shift-by", "-10")
        reset("--to-datetime", "2000-01-01T00:00:00.000")
        reset("--by-duration", "PT1H")
        _reset_from_an_exported_plan(story, group, topic)
        story.run("kafka-consumer-groups", "--reset-offsets", "--group", group, "--all-topics", "--to-current",
                  "--execute", sort=True)
    story.run("kafka-consumer-groups", "--reset-offsets", "--group", group, "--topic", f"{topic}:1",
              "--to-offset", "3", "--execute", sort=True)
    story.run("kafka-consumer-groups", "--describe", "--group", group, "--offsets", sort=True)
    story.run("kafka-consumer-groups", "--delete-offsets", "--group", group, "--topic", topic, sort=True)
    story.run("kafka-consumer-groups", "--describe", "--group", group, "--offsets", sort=True, expect_ok=False)
    story.run("kafka-consumer-groups", "--delete", "--group", group)
    story.run("kafka-consumer-groups", "--list", keep=_mine(story))


def _reset_from_an_exported_plan(story: Story, group: str, topic: str) -> None:
    """--dry-run --export writes the plan as CSV; --from-file executes a (possibly edited) plan."""
    exported = story.run("kafka-consumer-groups", "--reset-offsets", "--group", group, "--topic", topic,
                         "--to-offset", "4", "--dry-run", "--export", sort=True)
    with tempfile.TemporaryDirectory() as work:
        plan = Path(work) / "plan.csv"
        plan.write_text(exported.stdout.replace(",0,4", ",0,5"))  # edited: partition 0 to 5
        story.redactions[str(plan)] = "<plan.csv>"
        story.run("kafka-consumer-groups", "--reset-offsets", "--group", group, "--from-file", str(plan),
                  "--execute", sort=True)


def configs(story: Story) -> None:
    topic, group = story.name("configured"), story.name("tuned")
    story.run("kafka-topics", "--create", "--topic", topic, "--partitions", "1")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--alter", "--add-config",
              "retention.ms=3600000,max.message.bytes=2048")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--describe")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--alter", "--add-config",
              "cleanup.policy=[delete,compact]")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--alter", "--delete-config",
              "max.message.bytes")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--describe")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--alter", "--add-config",
              "retention.ms=soon", expect_ok=False, keep=lambda line: "Invalid" in line or "Error" in line)
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--alter", "--add-config",
              "no.such.config=1", expect_ok=False, keep=lambda line: "Unknown" in line or "Error" in line)
    story.run("kafka-configs", "--entity-type", "groups", "--entity-name", group, "--alter", "--add-config",
              "consumer.session.timeout.ms=50000")
    story.run("kafka-configs", "--entity-type", "groups", "--entity-name", group, "--describe")
    story.run("kafka-configs", "--entity-type", "groups", "--entity-name", group, "--alter", "--add-config",
              "consumer.session.timeout.ms=5", expect_ok=False, keep=lambda line: "Error" in line or "must" in line)
    story.run("kafka-configs", "--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config",
              "log.retention.ms=7200000")
    story.run("kafka-configs", "--entity-type", "brokers", "--entity-name", "1", "--describe")
    story.run("kafka-configs", "--entity-type", "topics", "--entity-name", topic, "--describe", "--all",
              keep=lambda line: line.startswith(("All configs", "retention.ms=", "cleanup.policy=", "segment.bytes=")))
    story.run("kafka-configs", "--entity-type", "brokers", "--entity-name", "1", "--alter", "--delete-config",
              "log.retention.ms")
    story.run("kafka-configs", "--entity-type", "brokers", "--entity-name", "1", "--describe")


def delete_records_and_log_dirs(story: Story) -> None:
    topic = story.name("trimmed")
    story.run("kafka-topics", "--create", "--topic", topic, "--partitions", "1")
    _produce_lines(story, topic, 10, keyed=False)
    with tempfile.TemporaryDirectory() as work:
        offsets = Path(work) / "offsets.json"

        def delete(offset: int, expect_ok: bool = True) -> None:
            offsets.write_text(json.dumps({"version": 1, "partitions": [
                {"topic": topic, "partition": 0, "offset": offset}]}))
            done = story.run("kafka-delete-records", "--offset-json-file", str(offsets), record=False,
                             expect_ok=expect_ok)
            story.note(f"kafka-delete-records --offset-json-file <{topic}-0 before {offset}>".replace(story.suffix, ""),
                       normalise("\n".join(line for line in done.output.splitlines() if "partition" in line),
                                 story.suffix), done.returncode)

        _describe_producers(story, topic)
        delete(3)
        story.run("kafka-console-consumer", "--topic", topic, "--partition", "0", "--offset", "earliest",
                  "--max-messages", "1", "--timeout-ms", "20000", "--formatter-property", "print.offset=true")
        delete(1)
        # earliest and latest (ListOffsets). Not -3 (max timestamp): which record carries the largest time
        # depends on the millisecond each was sent in, so the two brokers' answers differ by the clock; and after
        # DeleteRecords Kafka 4.3.1 may name a deleted record where groupcoord does not (on purpose:
        # tests/coordinator/dataplane/test_list_offsets.py::test_max_timestamp_counts_only_records_still_in_the_log).
        for when in ("-2", "-1"):
            story.run("kafka-get-offsets", "--topic", topic, "--time", when)
        delete(1000, expect_ok=False)
        delete(-1)
        story.run("kafka-get-offsets", "--topic", topic, "--time", "-2")
        _describe_producers(story, topic)
    story.run("kafka-consumer-groups", "--reset-offsets", "--group", story.name("late"), "--topic", topic,
              "--to-earliest", "--dry-run", sort=True)
    dirs = story.run("kafka-log-dirs", "--describe", "--topic-list", topic, record=False)
    payload = json.loads(next(line for line in dirs.stdout.splitlines() if line.startswith("{")))
    shape = [{"broker": b["broker"], "logDirs": [{"error": d["error"], "partitions": sorted(
        (p["partition"].replace(story.suffix, ""), p["offsetLag"], p["isFuture"]) for p in d["partitions"])}
        for d in b["logDirs"]]} for b in payload["brokers"]]
    story.note("kafka-log-dirs --describe --topic-list trimmed (JSON: partitions, offset lag, errors)",
               json.dumps(shape, sort_keys=True), dirs.returncode)


def _describe_producers(story: Story, topic: str) -> None:
    """kafka-transactions describe-producers (DescribeProducers): the console producer is idempotent, so its
    producer id, epoch and last sequence are there until its records are deleted. Ids and times masked."""
    done = story.run("kafka-transactions", "describe-producers", "--topic", topic, "--partition", "0", record=False)
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
    masked = [" ".join(row) if i == 0 else " ".join(["<producer-id>", *row[1:4], "<time>", *row[5:]])
              for i, row in enumerate(rows)]
    story.note(story.shown(done.command) + " (ids and times masked)", "\n".join(masked), done.returncode)


def client_quotas(story: Story) -> None:
    """``kafka-configs`` on users, clients and ips (DescribeClientQuotas/AlterClientQuotas). The bounded subset
    sets, shows and deletes quotas of this run's own names; the full run adds the refusals, ip quotas and a
    user default (removed again: the reference broker is shared, and its value is far above any test's rate)."""
    user, client = story.name("alice"), story.name("app")

    def configs(*args: str, **options) -> None:
        story.run("kafka-configs", *args, **options)

    configs("--alter", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152",
            "--entity-type", "users", "--entity-name", user)
    configs("--describe", "--entity-type", "users", "--entity-name", user)
    configs("--alter", "--add-config", "request_percentage=50", "--entity-type", "users", "--entity-name", user,
            "--entity-type", "clients", "--entity-name", client)
    configs("--describe", "--entity-type", "users", "--entity-name", user, "--entity-type", "clients",
            "--entity-name", client)
    configs("--alter", "--add-config", "producer_byte_rate=4096", "--entity-type", "clients", "--entity-name", client)
    configs("--describe", "--entity-type", "clients", "--entity-name", client)
    configs("--alter", "--delete-config", "consumer_byte_rate", "--entity-type", "users", "--entity-name", user)
    configs("--describe", "--entity-type", "users", "--entity-name", user)
    if not story.full:
        return
    configs("--alter", "--add-config", "producer_byte_rate=1.5", "--entity-type", "users", "--entity-name", user,
            expect_ok=False, keep=lambda line: "Error" in line or "fractional" in line)
    configs("--alter", "--add-config", "no_such_quota=1", "--entity-type", "clients", "--entity-name", client,
            expect_ok=False, keep=lambda line: "Error" in line or "Invalid" in line)
    configs("--alter", "--add-config", "connection_creation_rate=1000", "--entity-type", "ips", "--entity-name",
            "127.0.0.77")
    configs("--describe", "--entity-type", "ips", "--entity-name", "127.0.0.77")
    configs("--describe", "--entity-type", "users", keep=_mine(story))
    configs("--describe", "--entity-type", "clients", keep=_mine(story))
    configs("--alter", "--add-config", "controller_mutation_rate=1000000", "--entity-type", "users",
            "--entity-default")
    configs("--describe", "--entity-type", "users", "--entity-default")
    configs("--alter", "--delete-config", "controller_mutation_rate", "--entity-type", "users", "--entity-default")
    configs("--alter", "--delete-config", "connection_creation_rate", "--entity-type", "ips", "--entity-name",
            "127.0.0.77")
    configs("--alter", "--delete-config", "producer_byte_rate", "--entity-type", "users", "--entity-name", user)
    configs("--describe", "--entity-type", "users", "--entity-name", user)


STORIES: dict[str, Callable[[Story], None]] = {
    "topics": topics,
    "console_and_groups": console_and_groups,
    "configs": configs,
    "delete_records_and_log_dirs": delete_records_and_log_dirs,
    "client_quotas": client_quotas,
}
