"""Admin scenarios: what `kafka-configs`, `kafka-delete-records`, `kafka-log-dirs`, the admin client's
describeTopics/describeProducers and client quota calls observe, told as short stories (success and error
cases), run against Kafka 4.3.1 (the expected answers) and against groupcoord.

Every scenario leaves the shared reference broker as it found it (broker configs and client quotas it set are
removed again; its topics, groups and quota entities carry the run's unique suffix).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import wraps

from tests.conformance import requests as rq
from tests.conformance.admin import requests as aq
from tests.conformance.admin.requests import AdminApi
from tests.conformance.admin.session import NODE, AdminSession
from tests.conformance.consumer import ConsumerMember, topic_with_id
from tests.conformance.dataplane import requests as dq
from tests.conformance.transcript import Observation

TOPIC, BROKER, GROUP = aq.TOPIC, aq.BROKER, aq.GROUP
SET, DELETE, APPEND, SUBTRACT = aq.SET, aq.DELETE, aq.APPEND, aq.SUBTRACT
EXACT, DEFAULT, SPECIFIED = aq.MATCH_EXACT, aq.MATCH_DEFAULT, aq.MATCH_SPECIFIED


@dataclass(frozen=True)
class Scenario:
    name: str
    apis: tuple[AdminApi, ...]
    run: Callable[[str], Awaitable[list[Observation]]]


SCENARIOS: dict[str, Scenario] = {}


def scenario(*apis: AdminApi):
    def register(story: Callable[[AdminSession], Awaitable[None]]) -> Callable[[str], Awaitable[list[Observation]]]:
        @wraps(story)
        async def run(bootstrap: str) -> list[Observation]:
            async with AdminSession(bootstrap) as session:
                await story(session)
                return session.transcript.steps

        SCENARIOS[story.__name__] = Scenario(story.__name__, apis, run)
        return run

    return register


def values(*texts: str) -> list[bytes]:
    return [text.encode() for text in texts]


TOPIC_KEYS = ("retention.ms", "cleanup.policy", "max.message.bytes", "segment.bytes", "min.insync.replicas")


@scenario(AdminApi.INCREMENTAL_ALTER_CONFIGS, AdminApi.DESCRIBE_CONFIGS)
async def incremental_alter_configs_on_a_topic(s: AdminSession) -> None:
    orders = await s.topic("orders", 1)
    await s.incremental_alter("SET retention.ms and APPEND compact to cleanup.policy", [
        (TOPIC, orders, [("retention.ms", SET, "3600000"), ("cleanup.policy", APPEND, "compact")])])
    await s.describe_configs("DescribeConfigs of the topic with synonyms", [(TOPIC, orders, TOPIC_KEYS)],
                             synonyms=True)
    await s.incremental_alter("SUBTRACT delete from cleanup.policy, SET max.message.bytes", [
        (TOPIC, orders, [("cleanup.policy", SUBTRACT, "delete"), ("max.message.bytes", SET, "2048")])])
    await s.incremental_alter("DELETE retention.ms", [(TOPIC, orders, [("retention.ms", DELETE, None)])])
    await s.describe_configs("DescribeConfigs after the changes", [(TOPIC, orders, TOPIC_KEYS)])
    await s.incremental_alter("validate_only SET retention.ms", [(TOPIC, orders, [("retention.ms", SET, "1000")])],
                              validate_only=True)
    await s.describe_configs("DescribeConfigs after validate_only", [(TOPIC, orders, ("retention.ms",))])
    await s.incremental_alter("a non-numeric retention.ms", [(TOPIC, orders, [("retention.ms", SET, "soon")])])
    await s.incremental_alter("an unknown config", [(TOPIC, orders, [("no.such.config", SET, "1")])])
    await s.incremental_alter("APPEND to a config that is not a list", [
        (TOPIC, orders, [("retention.ms", APPEND, "5")])])
    await s.incremental_alter("the same key twice", [
        (TOPIC, orders, [("retention.ms", SET, "5"), ("retention.ms", DELETE, None)])])
    await s.incremental_alter("an unknown topic", [(TOPIC, s.name("topic", "ghost"), [("retention.ms", SET, "5")])])
    await s.describe_configs("DescribeConfigs of an unknown topic", [(TOPIC, s.name("topic", "ghost"), None)])


@scenario(AdminApi.ALTER_CONFIGS, AdminApi.DESCRIBE_CONFIGS)
async def alter_configs_replaces_the_whole_set(s: AdminSession) -> None:
    orders = await s.topic("orders", 1)
    await s.alter("AlterConfigs sets two configs", [
        (TOPIC, orders, {"retention.ms": "7200000", "max.message.bytes": "4096"})])
    await s.describe_configs("DescribeConfigs after it", [(TOPIC, orders, TOPIC_KEYS)])
    await s.alter("AlterConfigs with one config drops the other", [(TOPIC, orders, {"segment.bytes": "1048576"})])
    await s.describe_configs("DescribeConfigs after the replacement", [(TOPIC, orders, TOPIC_KEYS)])
    await s.alter("AlterConfigs with a bad value", [(TOPIC, orders, {"retention.ms": "never"})])
    await s.alter("AlterConfigs of an unknown topic", [(TOPIC, s.name("topic", "ghost"), {"retention.ms": "1"})])
    await s.alter("AlterConfigs validate_only", [(TOPIC, orders, {"retention.ms": "1"})], validate_only=True)
    await s.describe_configs("DescribeConfigs after validate_only", [(TOPIC, orders, TOPIC_KEYS)])
    await s.alter("AlterConfigs with no configs clears the overrides", [(TOPIC, orders, {})])
    await s.describe_configs("DescribeConfigs after clearing", [(TOPIC, orders, TOPIC_KEYS)])


@scenario(AdminApi.INCREMENTAL_ALTER_CONFIGS, AdminApi.DESCRIBE_CONFIGS)
async def broker_configs(s: AdminSession) -> None:
    """Broker-level and cluster-default dynamic configs, and the topic default they make; removed at the end."""
    orders = await s.topic("orders", 1)
    keys = ("log.retention.ms", "log.segment.bytes", "log.retention.bytes")
    await s.incremental_alter("SET log.retention.ms on this broker", [
        (BROKER, NODE, [("log.retention.ms", SET, "7200000")])])
    await s.incremental_alter("SET log.segment.bytes as the cluster default", [
        (BROKER, "", [("log.segment.bytes", SET, "2097152")])])
    await s.wait_for_broker_config("log.retention.ms", "7200000", 2)
    await s.wait_for_broker_config("log.segment.bytes", "2097152", 3)
    await s.describe_configs("DescribeConfigs of the broker", [(BROKER, NODE, keys)], synonyms=True)
    await s.describe_configs("the topic's defaults follow", [(TOPIC, orders, ("retention.ms", "segment.bytes"))])
    await s.incremental_alter("a static config", [(BROKER, NODE, [("num.partitions", SET, "3")])])
    await s.incremental_alter("another broker's id", [(BROKER, "2", [("log.retention.ms", SET, "1")])])
    await s.incremental_alter("a bad value", [(BROKER, NODE, [("log.retention.ms", SET, "week")])])
    await s.incremental_alter("DELETE both again", [(BROKER, NODE, [("log.retention.ms", DELETE, None)]),
                                                    (BROKER, "", [("log.segment.bytes", DELETE, None)])])
    await s.wait_for_broker_config("log.segment.bytes", "1073741824", 5)
    await s.describe_configs("DescribeConfigs of the broker afterwards", [(BROKER, NODE, keys)])


GROUP_KEYS = ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms")


@scenario(AdminApi.INCREMENTAL_ALTER_CONFIGS, AdminApi.DESCRIBE_CONFIGS, AdminApi.CONSUMER_GROUP_HEARTBEAT)
async def group_configs_take_effect(s: AdminSession) -> None:
    """A group's consumer.heartbeat.interval.ms is what its members are told; another group keeps the broker's."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "orders", 2, labels)
    tuned, plain = await s.group("tuned"), await s.group("plain")
    await s.incremental_alter("SET the group's session timeout and heartbeat interval", [
        (GROUP, tuned, [("consumer.session.timeout.ms", SET, "50000"),
                        ("consumer.heartbeat.interval.ms", SET, "6000")])])
    await s.wait_for_group_config(tuned, "consumer.heartbeat.interval.ms", "6000")
    await s.describe_configs("DescribeConfigs of the group", [(GROUP, tuned, GROUP_KEYS)], synonyms=True)
    a = await ConsumerMember.create(s, "A", tuned, labels)
    await a.join((topic,))
    b = await ConsumerMember.create(s, "B", plain, labels)
    await b.join((topic,))
    await s.incremental_alter("a heartbeat interval above the broker's maximum", [
        (GROUP, tuned, [("consumer.heartbeat.interval.ms", SET, "20000")])])
    await s.incremental_alter("a session timeout below the broker's minimum", [
        (GROUP, tuned, [("consumer.session.timeout.ms", SET, "1000")])])
    await s.incremental_alter("a session timeout not above the heartbeat interval", [
        (GROUP, plain, [("consumer.session.timeout.ms", SET, "45000"),
                        ("consumer.heartbeat.interval.ms", SET, "15000")])])
    await s.incremental_alter("an unknown group config", [(GROUP, tuned, [("consumer.no.such", SET, "1")])])
    await s.incremental_alter("a heartbeat interval that is not a number", [
        (GROUP, tuned, [("consumer.heartbeat.interval.ms", SET, "often")])])
    await s.incremental_alter("DELETE the heartbeat interval", [
        (GROUP, tuned, [("consumer.heartbeat.interval.ms", DELETE, None)])])
    await s.wait_for_group_config(tuned, "consumer.heartbeat.interval.ms", None)
    await a.heartbeat(step="A's next heartbeat is told the broker's interval")
    await s.describe_configs("DescribeConfigs of the group afterwards", [(GROUP, tuned, GROUP_KEYS)])
    await a.leave()
    await b.leave()


@scenario(AdminApi.DELETE_RECORDS)
async def delete_records(s: AdminSession) -> None:
    logs = await s.topic("logs", 2)
    await s.produce("Produce ten records", {(logs, 0): dq.batch(values(*(f"r{i}" for i in range(10))),
                                                                timestamps=[s.at(i) for i in range(10)])})
    await s.delete_records("DeleteRecords before offset 3", {(logs, 0): 3})
    await s.list_offsets("ListOffsets earliest after it", logs, {0: dq.EARLIEST_TIMESTAMP})
    await s.fetch("Fetch from offset 0", {(logs, 0): 0})
    await s.fetch("Fetch from offset 3", {(logs, 0): 3})
    await s.delete_records("DeleteRecords before an earlier offset", {(logs, 0): 1})
    await s.delete_records("DeleteRecords beyond the high watermark", {(logs, 0): 11})
    await s.delete_records("DeleteRecords to the high watermark (-1)", {(logs, 0): -1, (logs, 1): -1})
    await s.delete_records("DeleteRecords of a partition the topic does not have", {(logs, 7): 0})
    await s.delete_records("DeleteRecords of an unknown topic", {(s.name("topic", "ghost"), 0): 0})
    await s.produce("Produce after the deletion", {(logs, 0): dq.batch(values("late"), timestamps=[s.at(20)])})
    await s.fetch("Fetch from the log start", {(logs, 0): 10})


@scenario(AdminApi.DESCRIBE_LOG_DIRS)
async def describe_log_dirs(s: AdminSession) -> None:
    sized = await s.topic("sized", 2)
    await s.produce("Produce to partition 0", {(sized, 0): dq.batch(values("x"), timestamps=[s.at(0)])})
    await s.describe_log_dirs("DescribeLogDirs of two partitions and a missing one", {sized: (0, 1, 7)})
    await s.describe_log_dirs("DescribeLogDirs of an unknown topic", {s.name("topic", "ghost"): (0,)})
    await s.describe_log_dirs("DescribeLogDirs of everything", None)


@scenario(AdminApi.DESCRIBE_TOPIC_PARTITIONS)
async def describe_topic_partitions(s: AdminSession) -> None:
    """KIP-966 (what the Java admin client's describeTopics uses): pages of partitions with a cursor."""
    alpha, beta, gamma = await s.topic("alpha", 3), await s.topic("beta", 2), await s.topic("gamma", 1)
    ghost = s.name("topic", "ghost")
    first = await s.describe_topic_partitions("the first page of 4 partitions", (gamma, alpha, beta, ghost), 4)
    cursor = (first.next_cursor.topic_name, int(first.next_cursor.partition_index))
    await s.describe_topic_partitions("the next page from the cursor", (gamma, alpha, beta, ghost), 4, cursor)
    await s.describe_topic_partitions("a cursor on a topic not asked for", (alpha,), 10, (beta, 0))
    await s.describe_topic_partitions("a cursor past the topic's partitions", (alpha, beta), 10, (alpha, 5))
    await s.describe_topic_partitions("a limit of one partition", (alpha,), 1)


@scenario(AdminApi.DESCRIBE_PRODUCERS)
async def describe_producers(s: AdminSession) -> None:
    events = await s.topic("events", 2)
    producer = await s.init_producer_id("InitProducerId")
    await s.describe_producers("DescribeProducers before any write", {events: (0, 1)})
    first = replace(producer, base_sequence=0)
    await s.produce("Produce sequences 0-2", {(events, 0): dq.batch(values("a", "b", "c"),
                                                                   timestamps=[s.at(0), s.at(1), s.at(2)],
                                                                   producer=first)})
    await s.produce("Produce a plain record to partition 1", {(events, 1): dq.batch(values("p"), timestamps=[s.at(5)])})
    await s.describe_producers("DescribeProducers after the writes", {events: (0, 1)})
    await s.describe_producers("DescribeProducers of a missing partition", {events: (9,)})
    await s.describe_producers("DescribeProducers of an unknown topic", {s.name("topic", "ghost"): (0,)})


@scenario(AdminApi.ALTER_CLIENT_QUOTAS, AdminApi.DESCRIBE_CLIENT_QUOTAS)
async def client_quotas(s: AdminSession) -> None:
    alice, app = s.name("user", "alice"), s.name("client", "app")
    await s.alter_quotas("set user and user/client-id quotas", [
        ({"user": alice}, {"producer_byte_rate": 1048576, "consumer_byte_rate": 2097152}),
        ({"user": alice, "client-id": app}, {"request_percentage": 12.5}),
        ({"client-id": app}, {"producer_byte_rate": 4096})])
    await s.describe_quotas("describe the user, strictly", [("user", EXACT, alice)], strict=True)
    await s.describe_quotas("describe the user and what includes it", [("user", EXACT, alice)])
    await s.describe_quotas("describe the user and client-id pair", [("user", EXACT, alice),
                                                                     ("client-id", EXACT, app)])
    await s.describe_quotas("describe every client-id entity with this run's names", [("client-id", SPECIFIED, None)])
    await s.alter_quotas("remove one key", [({"user": alice}, {"consumer_byte_rate": None})])
    await s.describe_quotas("describe the user after the removal", [("user", EXACT, alice)], strict=True)
    await s.alter_quotas("validate_only", [({"user": alice}, {"producer_byte_rate": 1})], validate_only=True)
    await s.describe_quotas("describe after validate_only", [("user", EXACT, alice)], strict=True)
    await s.alter_quotas("refusals", [
        ({}, {"producer_byte_rate": 1}),
        ({"user": alice}, {"no_such_quota": 1}),
        ({"user": alice}, {"producer_byte_rate": 0}),
        ({"user": alice}, {"producer_byte_rate": 1.5}),
        ({"client-id": ""}, {"producer_byte_rate": 1}),
        ({"group": alice}, {"producer_byte_rate": 1}),
        ({"ip": "127.0.0.1", "user": alice}, {"connection_creation_rate": 1}),
        ({"ip": "127.0.0.1"}, {"producer_byte_rate": 1})])
    await s.alter_quotas("the same entity twice", [({"client-id": app}, {"producer_byte_rate": 8192}),
                                                   ({"client-id": app}, {"consumer_byte_rate": 8192})])
    await s.wait_for_quota({"client-id": app}, {"producer_byte_rate": 8192.0})  # Kafka applies the first one
    await s.describe_quotas("describe the client-id after it", [("client-id", EXACT, app)], strict=True)
    await s.describe_quotas("a filter with a null exact match", [("user", EXACT, None)])
    await s.describe_quotas("a filter mixing ip and user", [("ip", SPECIFIED, None), ("user", SPECIFIED, None)])
    await s.describe_quotas("a filter with an unknown entity type", [("group", SPECIFIED, None)])
    await s.describe_quotas("a filter naming a type twice", [("user", SPECIFIED, None), ("user", EXACT, alice)])
    await s.alter_quotas("remove everything again", [
        ({"user": alice}, {"producer_byte_rate": None}),
        ({"user": alice, "client-id": app}, {"request_percentage": None}),
        ({"client-id": app}, {"producer_byte_rate": None})])
    await s.describe_quotas("nothing of this run is left", [("user", EXACT, alice)])


@scenario(AdminApi.ALTER_CLIENT_QUOTAS, AdminApi.DESCRIBE_CLIENT_QUOTAS)
async def client_quota_defaults_and_ips(s: AdminSession) -> None:
    """Default entities and ip entities (shared names: set far above any test's rate and removed at the end)."""
    ip = "127.0.0.99"
    s.transcript.learn(ip, ip)
    await s.alter_quotas("an ip quota and a default ip quota", [
        ({"ip": ip}, {"connection_creation_rate": 100000}), ({"ip": None}, {"connection_creation_rate": 200000})])
    await s.describe_quotas("describe the ip", [("ip", EXACT, ip)])
    await s.describe_quotas("describe the default ip", [("ip", DEFAULT, None)])
    await s.alter_quotas("an unresolvable ip", [({"ip": "no.such.host.invalid"}, {"connection_creation_rate": 1})])
    await s.alter_quotas("a default user and client-id quota", [
        ({"user": None, "client-id": None}, {"controller_mutation_rate": 1000000})])
    await s.describe_quotas("describe the default pair", [("user", DEFAULT, None), ("client-id", DEFAULT, None)],
                            strict=True)
    await s.alter_quotas("remove them", [
        ({"ip": ip}, {"connection_creation_rate": None}), ({"ip": None}, {"connection_creation_rate": None}),
        ({"user": None, "client-id": None}, {"controller_mutation_rate": None})])
    await s.describe_quotas("the default ip is gone", [("ip", DEFAULT, None)])
