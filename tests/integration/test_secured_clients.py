"""Stock clients against the daemon over SASL_SSL (SCRAM-SHA-512) and over mutual TLS: kafka-python,
aiokafka, confluent-kafka, kcat and the Java kafka-clients consumer each produce, form a group, consume and
commit, configured exactly as they would be for a secured Kafka. The admin CLI checks the commits through
``--command-config`` the same way, and ``groupcoord users`` made the user before the daemon started.

The certificates (a CA, the broker for 127.0.0.1, a client ``CN=alice,OU=eng``) are made by the test with
``cryptography``; ``ssl.principal.mapping.rules`` turns the client's subject into ``User:alice``.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from groupcoord.coordinator.admin.client import AdminClient
from groupcoord.coordinator.admin.client_security import ClientSecurity
from groupcoord.coordinator.admin.operations import create_topic, fetch_committed
from tests.support.certs import make_pki
from tests.support.daemon import Daemon

pytestmark = pytest.mark.timeout(180)

PASSWORD = "alice-secret"
MESSAGES = 20
PARTITIONS = 2
KCAT = shutil.which("kcat")


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    root = tmp_path_factory.mktemp("secured")
    pki = make_pki(root / "pki")
    data = root / "data"
    added = subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", "users", "add", "alice",
                            "--data-dir", str(data), "--mechanism", "SCRAM-SHA-512", "--password-file", "-"
                            if False else str(_write(root / "pw", PASSWORD))], capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    # REAUTH is a second SASL_SSL listener whose sessions last 2 s (KIP-368): clients re-authenticate on it.
    daemon = Daemon(data, listeners="SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0,REAUTH://127.0.0.1:0",
                    listener_security_protocol_map="SASL_SSL:SASL_SSL,SSL:SSL,REAUTH:SASL_SSL",
                    sasl_enabled_mechanisms="SCRAM-SHA-512", ssl_keystore_location=str(pki.broker.combined),
                    ssl_truststore_location=str(pki.ca),
                    ssl_principal_mapping_rules="RULE:^CN=([^,]*),.*$/$1/L,DEFAULT", metrics_port="-1",
                    override=["listener.name.ssl.ssl.client.auth=required",
                              "listener.name.reauth.connections.max.reauth.ms=2000"]).start()
    configs = {
        "sasl_ssl": _write(root / "sasl_ssl.properties", "\n".join([
            "security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512",
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\",
            f'    username="alice" password="{PASSWORD}";',
            "ssl.truststore.type=PEM", f"ssl.truststore.location={pki.ca}"]) + "\n"),
        "mtls": _write(root / "mtls.properties", "\n".join([
            "security.protocol=SSL", "ssl.truststore.type=PEM", f"ssl.truststore.location={pki.ca}",
            "ssl.keystore.type=PEM", f"ssl.keystore.location={pki.clients['alice'].combined}"]) + "\n"),
    }
    try:
        configs["reauth"] = configs["sasl_ssl"]
        yield {"daemon": daemon, "pki": pki, "configs": configs,
               "bootstrap": {"sasl_ssl": daemon.listeners["SASL_SSL"], "mtls": daemon.listeners["SSL"],
                             "reauth": daemon.listeners["REAUTH"]}}
    finally:
        daemon.kill()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def admin_run(secured, kind, work):
    async def run():
        security = ClientSecurity.from_file(secured["configs"][kind])
        async with AdminClient(secured["bootstrap"][kind], security=security) as client:
            return await work(client)
    return asyncio.run(run())


def new_topic(secured, kind) -> str:
    topic = unique(f"{kind}-topic")
    admin_run(secured, kind, lambda c: create_topic(c, topic, PARTITIONS, 1, {}))
    return topic


def committed_total(secured, kind, group) -> int:
    offsets = admin_run(secured, kind, lambda c: fetch_committed(c, group))
    return sum(o.offset for o in offsets.values())


KINDS = ["sasl_ssl", "mtls"]


@pytest.mark.parametrize("kind", KINDS)
def test_kafka_python(secured, kind):
    from kafka import KafkaConsumer, KafkaProducer

    pki = secured["pki"]
    options = {"bootstrap_servers": secured["bootstrap"][kind], "ssl_cafile": str(pki.ca)}
    if kind == "sasl_ssl":
        options.update(security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="alice",
                       sasl_plain_password=PASSWORD)
    else:
        options.update(security_protocol="SSL", ssl_certfile=str(pki.clients["alice"].cert),
                       ssl_keyfile=str(pki.clients["alice"].key))
    topic, group = new_topic(secured, kind), unique("kp-group")
    producer = KafkaProducer(**options)
    for i in range(MESSAGES):
        producer.send(topic, f"m{i}".encode(), partition=i % PARTITIONS)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=20000, **options)
    got = []
    for message in consumer:
        got.append(message.value)
        if len(got) == MESSAGES:
            break
    consumer.commit()
    consumer.close()
    assert sorted(got) == sorted(f"m{i}".encode() for i in range(MESSAGES))
    assert committed_total(secured, kind, group) == MESSAGES


@pytest.mark.parametrize("kind", KINDS)
def test_aiokafka(secured, kind):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.helpers import create_ssl_context

    pki = secured["pki"]
    topic, group = new_topic(secured, kind), unique("aio-group")

    async def run():
        if kind == "sasl_ssl":
            options = dict(security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="alice",
                           sasl_plain_password=PASSWORD, ssl_context=create_ssl_context(cafile=str(pki.ca)))
        else:
            options = dict(security_protocol="SSL", ssl_context=create_ssl_context(
                cafile=str(pki.ca), certfile=str(pki.clients["alice"].cert), keyfile=str(pki.clients["alice"].key)))
        bootstrap = secured["bootstrap"][kind]
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **options)
        await producer.start()
        try:
            for i in range(MESSAGES):
                await producer.send_and_wait(topic, f"m{i}".encode(), partition=i % PARTITIONS)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                    enable_auto_commit=False, **options)
        await consumer.start()
        got = []
        try:
            async with asyncio.timeout(30):
                async for message in consumer:
                    got.append(message.value)
                    if len(got) == MESSAGES:
                        break
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    got = asyncio.run(run())
    assert sorted(got) == sorted(f"m{i}".encode() for i in range(MESSAGES))
    assert committed_total(secured, kind, group) == MESSAGES


def librdkafka_config(secured, kind) -> dict[str, str]:
    pki = secured["pki"]
    config = {"bootstrap.servers": secured["bootstrap"][kind], "ssl.ca.location": str(pki.ca)}
    if kind in ("sasl_ssl", "reauth"):
        config.update({"security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "alice",
                       "sasl.password": PASSWORD})
    else:
        config.update({"security.protocol": "SSL", "ssl.certificate.location": str(pki.clients["alice"].cert),
                       "ssl.key.location": str(pki.clients["alice"].key)})
    return config


@pytest.mark.parametrize("kind", KINDS)
def test_confluent_kafka(secured, kind):
    from confluent_kafka import Consumer, Producer

    config = librdkafka_config(secured, kind)
    topic, group = new_topic(secured, kind), unique("ck-group")
    producer = Producer(config)
    for i in range(MESSAGES):
        producer.produce(topic, f"m{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = []
    try:
        for _ in range(300):
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                got.append(message.value())
            if len(got) == MESSAGES:
                break
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(got) == sorted(f"m{i}".encode() for i in range(MESSAGES))
    assert committed_total(secured, kind, group) == MESSAGES


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
@pytest.mark.parametrize("kind", KINDS)
def test_kcat(secured, kind):
    config = librdkafka_config(secured, kind)
    bootstrap = config.pop("bootstrap.servers")
    flags = [f"-X{k}={v}" for k, v in config.items()]
    topic, group = new_topic(secured, kind), unique("kcat-group")
    produced = subprocess.run([KCAT, "-b", bootstrap, "-q", *flags, "-P", "-t", topic],
                              input="".join(f"m{i}\n" for i in range(MESSAGES)), capture_output=True, text=True,
                              timeout=60)
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run([KCAT, "-b", bootstrap, "-q", *flags, "-G", group, topic, "-o", "beginning",
                               "-c", str(MESSAGES), "-X", "auto.commit.interval.ms=100"],
                              capture_output=True, text=True, timeout=60)
    assert consumed.returncode == 0, consumed.stderr
    assert sorted(consumed.stdout.split()) == sorted(f"m{i}" for i in range(MESSAGES))
    assert committed_total(secured, kind, group) == MESSAGES


def reauthentications(secured) -> float:
    """Successful re-authentications the daemon counted (its Prometheus endpoint)."""
    import json
    import urllib.request

    started = next(json.loads(line) for line in secured["daemon"].output if '"broker started"' in line)
    with urllib.request.urlopen(f"http://127.0.0.1:{started['metrics_port']}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith('groupcoord_reauthentications_total{listener="REAUTH"') and 'result="success"' in line)


def test_confluent_kafka_re_authenticates_within_its_session(secured):
    """librdkafka re-authenticates before the 2 s session ends (KIP-368) and keeps consuming past several
    sessions on the same connections."""
    from confluent_kafka import Consumer, Producer

    config = librdkafka_config(secured, "reauth")
    topic, group = new_topic(secured, "sasl_ssl"), unique("reauth-group")
    before = reauthentications(secured)
    producer = Producer(config)
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = []
    try:
        deadline = time.monotonic() + 7
        i = 0
        while time.monotonic() < deadline:  # three and more session lifetimes
            producer.produce(topic, f"m{i}".encode(), partition=i % PARTITIONS)
            producer.poll(0)
            i += 1
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                got.append(message.value())
        assert producer.flush(30) == 0
        while len(got) < i:
            message = consumer.poll(1.0)
            assert message is not None, (len(got), i)
            if message.error() is None:
                got.append(message.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(got) == sorted(f"m{n}".encode() for n in range(i))
    assert reauthentications(secured) - before >= 2


@pytest.mark.java
@pytest.mark.parametrize("kind", KINDS + ["reauth"])
def test_java_kafka_clients_consumer_group(secured, kind):
    from tests.reference.java_module import assert_java_test_passes

    assert_java_test_passes(secured["bootstrap"][kind], client_config=secured["configs"][kind])
    if kind == "reauth":
        assert reauthentications(secured) >= 3  # the Java client re-authenticated its connections


def test_the_admin_cli_authenticates_with_command_config(secured):
    for kind in KINDS:
        done = subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", "users", "list", "--json",
                               "--bootstrap-server", secured["bootstrap"][kind], "--command-config",
                               str(secured["configs"][kind])], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert '"user": "alice"' in done.stdout
    plain = subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", "health", "--bootstrap-server",
                            secured["bootstrap"]["sasl_ssl"], "--timeout", "5"], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 1  # no --command-config: a plaintext client on a TLS port is refused


def test_a_client_without_a_certificate_is_refused_on_the_mutual_tls_listener(secured):
    pki = secured["pki"]
    host, port = secured["bootstrap"]["mtls"].rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(pki.ca))
    import socket

    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with context.wrap_socket(raw, server_hostname=host) as tls:
                tls.sendall(b"\x00\x00\x00\x01\x00")
                assert tls.recv(1) == b""  # TLS 1.3 reports the refused certificate after the handshake
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
            pass
    daemon = secured["daemon"]
    assert daemon.proc.poll() is None
