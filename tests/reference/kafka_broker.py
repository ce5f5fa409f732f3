"""A real single-node Apache Kafka (KRaft, combined broker+controller) on loopback, for differential tests.

Kafka's answers are the specification groupcoord is held to, so the broker runs as close to stock as a
test allows: only the settings a one-node cluster needs and the rebalance delay (which only slows tests)
differ from the defaults.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.conformance.wire import supported_versions
from tests.reference.kafka_distribution import KafkaDistribution, ReferenceUnavailable, ensure_kafka

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 20.0
START_ATTEMPTS = 2
JVM_OPTIONS = ("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Djava.awt.headless=true")
_LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
"""


@dataclass(frozen=True)
class KafkaSecurity:
    """A SASL_PLAINTEXT listener beside the PLAINTEXT one (which stays: the start-up check and the inter-broker
    and controller traffic use it). SCRAM users are created when the storage is formatted (``--add-scram``,
    KIP-900), PLAIN users are PlainLoginModule ``user_<name>`` entries; ``extra`` adds server properties
    (``authorizer.class.name``, ``super.users``, ...)."""

    mechanisms: tuple[str, ...] = ("SCRAM-SHA-512",)
    scram_users: tuple[tuple[str, str, str], ...] = ()  # (mechanism, user, password)
    plain_users: tuple[tuple[str, str], ...] = ()       # (user, password)
    extra: tuple[tuple[str, str], ...] = ()

    LISTENER = "SASL_PLAINTEXT"

    def properties(self, sasl_port: int) -> dict[str, str]:
        props = {"sasl.enabled.mechanisms": ",".join(self.mechanisms)}
        for mechanism in self.mechanisms:
            prefix = f"listener.name.{self.LISTENER.lower()}.{mechanism.lower()}.sasl.jaas.config"
            if mechanism == "PLAIN":
                users = " ".join(f'user_{u}="{p}"' for u, p in self.plain_users)
                props[prefix] = f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
            else:
                props[prefix] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        props.update(dict(self.extra))
        return props

    def format_arguments(self) -> list[str]:
        return [f"--add-scram={m}=[name={u},password={p}]" for m, u, p in self.scram_users]


@dataclass(frozen=True)
class KafkaBrokerConfig:
    group_initial_rebalance_delay_ms: int = 0
    offsets_topic_num_partitions: int = 50
    extra: dict[str, str] = field(default_factory=dict)
    security: KafkaSecurity | None = None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def new_cluster_id() -> str:
    """KRaft cluster ids are base64url-encoded UUIDs without padding; one may start with '-', so callers
    pass it as --cluster-id=ID, never as a separate argument."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def server_properties(config: KafkaBrokerConfig, port: int, controller_port: int, log_dir: Path,
                      sasl_port: int = 0) -> str:
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": str(config.offsets_topic_num_partitions),
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        # The share coordinator's __share_group_state (KIP-932) on a single node, as the two internal topics above.
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # Timed-out transactions are looked for every half second (Kafka's default is 10 s), so that the
        # transaction conformance suite's timeout scenario takes seconds; groupcoord's runs with the same.
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
        "group.initial.rebalance.delay.ms": str(config.group_initial_rebalance_delay_ms),
        # KIP-848 groups: Kafka 4.3 computes a target assignment at most once a second (in the first heartbeat
        # after the interval); the goldens were recorded with it computed in the heartbeat that bumps the group
        # epoch, and groupcoord's test broker runs the same (coordinator/pytest_plugin.TEST_DEFAULTS). The
        # offload setting is inert in 4.3.1 (named, not defined: its getter returns the default), kept as
        # the goldens were recorded with it.
        "group.consumer.assignment.interval.ms": "0",
        "group.consumer.assignor.offload.enable": "false",
        # Share groups (KIP-932): Kafka 4.3.1 serves them by default (share.version=1 is finalized by the storage
        # format's defaults). Their target assignment is computed in the heartbeat, as groupcoord does, and
        # their sessions may be short enough for a scenario to watch one expire.
        "group.share.assignment.interval.ms": "0",
        "group.share.assignor.offload.enable": "false",
        "group.share.session.timeout.ms": "6000",
        # Lower bounds (only: every default stays) under which a test may set a group's share.session.timeout.ms,
        # share.heartbeat.interval.ms and share.record.lock.duration.ms (IncrementalAlterConfigs on GROUP), so
        # that a fenced member or an expired lock takes seconds; groupcoord's tests start it with the same.
        "group.share.min.session.timeout.ms": "2000",
        "group.share.min.heartbeat.interval.ms": "500",
        "group.share.min.record.lock.duration.ms": "1000",
        **config.extra,
    }
    if config.security is not None:
        name = KafkaSecurity.LISTENER
        settings["listeners"] += f",{name}://127.0.0.1:{sasl_port}"
        settings["advertised.listeners"] += f",{name}://127.0.0.1:{sasl_port}"
        settings["listener.security.protocol.map"] += f",{name}:{name}"
        settings.update(config.security.properties(sasl_port))
    return "".join(f"{key}={value}\n" for key, value in settings.items())


@dataclass
class KafkaBroker:
    distribution: KafkaDistribution
    config: KafkaBrokerConfig = field(default_factory=KafkaBrokerConfig)
    workdir: Path | None = None
    port: int = 0
    sasl_port: int = 0
    process: subprocess.Popen | None = None
    started_in_s: float = 0.0

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_bootstrap_servers(self) -> str:
        """The SASL_PLAINTEXT listener (with ``KafkaBrokerConfig.security``)."""
        return f"127.0.0.1:{self.sasl_port}"

    @property
    def log_file(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "server.log"

    def _java(self, main_class: str, *args: str) -> list[str]:
        log4j = self.workdir / "log4j2.properties"
        return ["java", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={log4j}", "-cp",
                self.distribution.classpath, main_class, *args]

    def start(self) -> None:
        began = time.monotonic()
        self.workdir = Path(tempfile.mkdtemp(prefix="groupcoord-kafka-ref-"))
        self.port, controller_port = free_port(), free_port()
        self.sasl_port = free_port() if self.config.security is not None else 0
        properties = self.workdir / "server.properties"
        properties.write_text(server_properties(self.config, self.port, controller_port, self.workdir / "data",
                                                self.sasl_port))
        scram = self.config.security.format_arguments() if self.config.security is not None else []
        (self.workdir / "log4j2.properties").write_text(_LOG4J2.format(log=self.log_file))
        formatted = subprocess.run(
            self._java("kafka.tools.StorageTool", "format", f"--cluster-id={new_cluster_id()}",
                       f"--config={properties}", *scram),
            capture_output=True, text=True, timeout=START_TIMEOUT_S)
        if formatted.returncode != 0:
            self.stop()
            raise ReferenceUnavailable(f"kafka storage format failed: {(formatted.stdout + formatted.stderr)[-2000:]}")
        stdio = open(self.workdir / "stdout.log", "wb")
        self.process = subprocess.Popen(self._java("kafka.Kafka", str(properties)), stdout=stdio,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        stdio.close()
        self._wait_until_serving(began + START_TIMEOUT_S)
        self.started_in_s = time.monotonic() - began

    def _wait_until_serving(self, deadline: float) -> None:
        """Serving means answering ApiVersions on the client listener, not merely accepting connections."""
        problem = f"Kafka did not answer ApiVersions within {START_TIMEOUT_S:.0f} s"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                problem = f"Kafka exited with {self.process.returncode} during start-up"
                break
            try:
                asyncio.run(supported_versions(self.bootstrap_servers, timeout_s=2.0))
                return
            except (OSError, asyncio.TimeoutError, RuntimeError):
                time.sleep(0.2)
        tail = self._log_tail()
        self.stop()
        raise ReferenceUnavailable(f"{problem}: {tail}")

    def _log_tail(self) -> str:
        for name in ("server.log", "stdout.log"):
            path = self.workdir / name
            if path.exists() and path.stat().st_size:
                return path.read_text(errors="replace")[-2000:]
        return "(no log output)"

    def restart(self) -> None:
        """A clean shutdown (SIGTERM) and a start on the same data directory and ports: what Kafka made durable
        (its logs, __consumer_offsets, __share_group_state) is all the new process has."""
        began = time.monotonic()
        self._shut_down()
        stdio = open(self.workdir / "stdout.log", "ab")
        self.process = subprocess.Popen(self._java("kafka.Kafka", str(self.workdir / "server.properties")),
                                        stdout=stdio, stderr=subprocess.STDOUT, start_new_session=True)
        stdio.close()
        self._wait_until_serving(began + START_TIMEOUT_S + STOP_TIMEOUT_S)

    def _shut_down(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_TIMEOUT_S)

    def stop(self) -> None:
        self._shut_down()
        if self.workdir is not None and os.environ.get("GROUPCOORD_KEEP_KAFKA_DIR") is None:
            shutil.rmtree(self.workdir, ignore_errors=True)


@dataclass
class SharedKafkaBroker:
    """One broker per test process however many conftests expose the fixture; stopped with the last user."""

    config: KafkaBrokerConfig = field(default_factory=KafkaBrokerConfig)
    broker: KafkaBroker | None = None
    users: int = 0
    failure: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def acquire(self) -> KafkaBroker:
        with self.lock:
            if self.failure is not None:
                raise ReferenceUnavailable(self.failure)
            if self.broker is None:
                try:
                    broker = self._start(self.config)
                except ReferenceUnavailable as exc:
                    self.failure = str(exc)
                    raise
                self.broker = broker
                atexit.register(broker.stop)  # a crashed or interrupted session must not leave a JVM behind
            self.users += 1
            return self.broker

    @staticmethod
    def _start(config: KafkaBrokerConfig) -> KafkaBroker:
        """A second attempt, on fresh ports, covers a free port taken by another process before Kafka bound it."""
        distribution = ensure_kafka()
        for _ in range(START_ATTEMPTS - 1):
            broker = KafkaBroker(distribution, config)
            try:
                broker.start()
                return broker
            except ReferenceUnavailable:
                continue
        broker = KafkaBroker(distribution, config)
        broker.start()
        return broker

    def release(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0 and self.broker is not None:
                self.broker.stop()
                self.broker = None


SHARED_BROKER = SharedKafkaBroker()
