"""Stock clients refused by ACLs, against the daemon over SASL_PLAINTEXT (SCRAM-SHA-512) with the
StandardAuthorizer: a principal without READ on its group, or without WRITE on its topic, gets the error a
secured Kafka gives it (kafka-python, aiokafka, confluent-kafka, kcat and the Java kafka-clients each raise or
report it their own way),
while a principal the ACLs allow produces and consumes on the same daemon. The ACLs are added with
``groupcoord acls add --command-config`` as the super user, over the same listener.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.daemon import Daemon
from tests.support.waiting import wait_for

pytestmark = pytest.mark.timeout(180)

MECHANISM = "SCRAM-SHA-512"
USERS = {"admin": "admin-secret", "alice": "alice-secret", "mallory": "mallory-secret"}
TOPIC = "orders"
HIDDEN_TOPIC = "ledger"  # exists, but only the super user has any ACL on it


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    root = tmp_path_factory.mktemp("acl-clients")
    data = root / "data"
    for user, password in USERS.items():
        (root / f"{user}.pw").write_text(password)
        added = _cli("users", "add", user, "--data-dir", str(data), "--mechanism", MECHANISM,
                     "--password-file", str(root / f"{user}.pw"))
        assert added.returncode == 0, added.stderr
    daemon = Daemon(data, listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_enabled_mechanisms=MECHANISM,
                    authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                    super_users="User:admin", group_initial_rebalance_delay_ms="0", metrics_port="-1").start()
    admin = root / "admin.properties"
    admin.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                     "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                     'username="admin" password="admin-secret";\n')
    bootstrap = daemon.listeners["SASL_PLAINTEXT"]
    try:
        common = ["--bootstrap-server", bootstrap, "--command-config", str(admin)]
        for topic in (TOPIC, HIDDEN_TOPIC):
            made = _cli("topics", "create", "--topic", topic, "--partitions", "1", *common)
            assert made.returncode == 0, made.stderr
        for args in (["--allow-principal", "User:alice", "--consumer", "--producer", "--topic", TOPIC, "--group", "alice-"],
                     ["--allow-principal", "User:mallory", "--operation", "Read", "--topic", TOPIC]):
            added = _cli("acls", "add", *args, "--resource-pattern-type", "prefixed" if "alice-" in args else "literal",
                         *common)
            assert added.returncode == 0, added.stderr
        listed = _cli("acls", "list", "--json", *common)
        assert listed.returncode == 0 and '"User:mallory"' in listed.stdout, listed.stderr
        yield {"bootstrap": bootstrap, "daemon": daemon, "root": root}
    finally:
        daemon.kill()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def kafka_python_options(secured, user: str) -> dict:
    return {"bootstrap_servers": secured["bootstrap"], "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": MECHANISM, "sasl_plain_username": user, "sasl_plain_password": USERS[user]}


def test_alice_s_acls_let_her_produce_and_consume(secured):
    """The control: the same daemon, ACLs that allow (so the refusals below are the ACLs' doing)."""
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(**kafka_python_options(secured, "alice"))
    producer.send(TOPIC, b"hello").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(TOPIC, group_id=unique("alice-g"), auto_offset_reset="earliest",
                             **kafka_python_options(secured, "alice"))
    got = []
    deadline = time.monotonic() + 30  # polled until her record arrives (not a fixed 15 s of silence)
    while b"hello" not in got and time.monotonic() < deadline:
        got += [m.value for records in consumer.poll(timeout_ms=500).values() for m in records]
    consumer.commit()
    consumer.close()
    assert b"hello" in got


def kafka_python_consumer_refused_its_group(secured, group: str) -> None:
    """mallory's kafka-python consumer of ``group`` (no ACL on it) polls until it raises GroupAuthorizationFailed."""
    from kafka import KafkaConsumer
    from kafka.errors import GroupAuthorizationFailedError

    consumer = KafkaConsumer(TOPIC, group_id=group, auto_offset_reset="earliest",
                             **kafka_python_options(secured, "mallory"))
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close()


def kafka_python_producer_refused_the_topic(secured) -> None:
    """mallory's kafka-python producer (READ on TOPIC, no WRITE) sends one record and gets TopicAuthorizationFailed."""
    from kafka import KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    producer = KafkaProducer(retries=0, **kafka_python_options(secured, "mallory"))
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(TOPIC, b"not allowed").get(timeout=30)
    finally:
        producer.close(timeout=5)


def test_kafka_python_consumer_without_read_on_its_group(secured):
    kafka_python_consumer_refused_its_group(secured, unique("mallory-g"))


def test_kafka_python_producer_without_write_on_its_topic(secured):
    kafka_python_producer_refused_the_topic(secured)


def test_kafka_python_cannot_even_see_a_topic_it_may_not_describe(secured):
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError, TopicAuthorizationFailedError

    producer = KafkaProducer(max_block_ms=5000, **kafka_python_options(secured, "mallory"))
    try:
        with pytest.raises((TopicAuthorizationFailedError, KafkaTimeoutError)):
            producer.send("secret-" + uuid.uuid4().hex[:6], b"x").get(timeout=30)
    finally:
        producer.close(timeout=5)


def confluent_config(secured, user: str) -> dict:
    return {"bootstrap.servers": secured["bootstrap"], "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": MECHANISM, "sasl.username": user, "sasl.password": USERS[user]}


def test_confluent_kafka_consumer_without_read_on_its_group(secured):
    from confluent_kafka import Consumer, KafkaError

    consumer = Consumer({**confluent_config(secured, "mallory"), "group.id": unique("mallory-cg"),
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([TOPIC])
    seen = None
    try:
        deadline = time.monotonic() + 30
        while seen is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is not None:
                seen = msg.error().code()
    except Exception as exc:  # newer librdkafka raises the fatal group error from poll
        seen = exc.args[0].code() if exc.args and hasattr(exc.args[0], "code") else exc
    finally:
        consumer.close()
    assert seen == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_confluent_kafka_producer_without_write_on_its_topic(secured):
    from confluent_kafka import KafkaError, Producer

    producer = Producer({**confluent_config(secured, "mallory"), "message.send.max.retries": 0})
    reports = []
    producer.produce(TOPIC, b"not allowed", on_delivery=lambda err, msg: reports.append(err))
    producer.flush(30)
    assert [e.code() if e is not None else None for e in reports] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]


def test_aiokafka_consumer_without_read_on_its_group(secured):
    from aiokafka import AIOKafkaConsumer
    from aiokafka.errors import GroupAuthorizationFailedError

    async def run():
        consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=secured["bootstrap"], group_id=unique("mallory-ag"),
                                    security_protocol="SASL_PLAINTEXT", sasl_mechanism=MECHANISM,
                                    sasl_plain_username="mallory", sasl_plain_password=USERS["mallory"],
                                    auto_offset_reset="earliest")
        await consumer.start()
        try:
            await asyncio.wait_for(consumer.getone(), timeout=30)
        finally:
            await consumer.stop()

    with pytest.raises(GroupAuthorizationFailedError):
        asyncio.run(run())


def test_the_denials_are_logged_with_principal_resource_and_operation(secured):
    """Its own refusals (under ``make test`` the module's tests may run in several processes, each with its own
    daemon), then their lines, read as the daemon's output reaches the test (a thread pumps it)."""
    group = unique("mallory-logged")
    kafka_python_consumer_refused_its_group(secured, group)
    kafka_python_producer_refused_the_topic(secured)

    def denials() -> set[tuple[str, str, str]]:
        lines = [json.loads(line) for line in list(secured["daemon"].output) if line.startswith("{")]
        return {(d["api"], d["operation"], d["resource"]) for d in lines
                if d.get("event") == "authorization denied" and d.get("principal") == "User:mallory"}

    expected = {("FindCoordinator", "DESCRIBE", f"Group:LITERAL:{group}"), ("Produce", "WRITE", f"Topic:LITERAL:{TOPIC}")}
    assert wait_for(lambda: denials() >= expected, 10), denials()


KCAT = shutil.which("kcat")


def _kcat(secured, user: str, *args: str, stdin: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([KCAT, "-b", secured["bootstrap"], "-X", "security.protocol=SASL_PLAINTEXT",
                           "-X", f"sasl.mechanism={MECHANISM}", "-X", f"sasl.username={user}",
                           "-X", f"sasl.password={USERS[user]}", *args],
                          input=stdin, capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
def test_kcat_producer_without_write_and_its_control(secured):
    refused = _kcat(secured, "mallory", "-P", "-t", TOPIC, stdin="not allowed\n")
    assert refused.returncode != 0 and "Topic authorization failed" in refused.stderr, refused.stderr
    allowed = _kcat(secured, "alice", "-P", "-t", TOPIC, stdin="from kcat\n")
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
def test_kcat_consumer_without_read_on_its_group(secured):
    # the balanced consumer (-G) reports the group error and, with -e, exits; bounded by the timeout anyway
    try:
        out = _kcat(secured, "mallory", "-G", unique("mallory-kc"), "-e", "-o", "beginning", TOPIC, timeout=20)
        text = out.stderr + out.stdout
    except subprocess.TimeoutExpired as exc:
        text = (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    assert "Group authorization failed" in text or "GROUP_AUTHORIZATION_FAILED" in text, text[-2000:]


def java_client_config(secured, user: str) -> Path:
    path = secured["root"] / f"{user}-java.properties"
    path.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={MECHANISM}\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                    f'username="{user}" password="{USERS[user]}";\n')
    return path


@pytest.mark.java
def test_java_kafka_clients_refused_without_acls_and_its_control(secured):
    """tests/java AclRefusalTest: mallory's consumer (classic and consumer protocol) gets
    GroupAuthorizationException from poll and from commitSync, her producer TopicAuthorizationException (or,
    idempotent as it is by default, ClusterAuthorizationException: no producer id without some WRITE, KIP-679);
    alice's consumer, allowed its group but not HIDDEN_TOPIC, gets TopicAuthorizationException there; and alice
    produces, consumes and commits on ``orders`` with both group protocols (the control)."""
    from tests.reference.java_module import assert_java_test_passes

    assert_java_test_passes(
        secured["bootstrap"], "AclRefusalTest", client_config=java_client_config(secured, "mallory"),
        properties={"controlClientConfig": str(java_client_config(secured, "alice")), "topic": TOPIC,
                    "hiddenTopic": HIDDEN_TOPIC, "controlGroupPrefix": "alice-"})
    # the refusals are the daemon's ACL decisions, logged with principal, resource and operation
    lines = [json.loads(line) for line in secured["daemon"].output if line.startswith("{")]
    denied = [d for d in lines if d.get("event") == "authorization denied"]
    denials = {(d["principal"], d["resource"].split(":")[0], d["operation"]) for d in denied
               if "java-" in d["resource"] or d["resource"].endswith(f":{HIDDEN_TOPIC}")}
    assert {("User:mallory", "Group", "DESCRIBE"), ("User:alice", "Topic", "DESCRIBE")} <= denials, denials
