"""The Apache Kafka the side-by-side benches compare against: the cached 4.3.1 jars of the test reference,
but started as one would run it in production (G1, full JIT, a 1 GiB heap), pinned to the server core.

The test reference (tests/reference/kafka_broker.py) starts Kafka with a small heap, SerialGC and C1 only,
which is right for a quick differential test and wrong for a throughput figure; everything else (the
cached distribution, the KRaft single-node properties, format, readiness check, stop) is reused from it.

The group settings are the ones groupcoord runs with in the same comparison, so a figure differs by
implementation, not by configuration. `SETTINGS_VS_DEFAULTS` lists every setting that differs from Kafka's
default and is printed with the results.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from tests.reference.kafka_broker import KafkaBroker, KafkaBrokerConfig
from tests.reference.kafka_distribution import KAFKA_VERSION, ensure_kafka

# kafka-server-start.sh's KAFKA_HEAP_OPTS and kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS, as shipped.
PRODUCTION_JVM_OPTIONS = ("-server", "-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                          "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                          "-Djava.awt.headless=true")


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    kafka_default: str
    applies_to: str  # "both" or "kafka": groupcoord has no such setting and behaves like `value`
    why: str


# Every setting either broker runs with that is not Kafka's default. KRaft single-node plumbing (listeners,
# node id, quorum voters, log dir) is left out: it only makes a one-node cluster.
SETTINGS_VS_DEFAULTS: tuple[Setting, ...] = (
    Setting("offsets.topic.replication.factor", "1", "3", "kafka", "one node"),
    Setting("transaction.state.log.replication.factor", "1", "3", "kafka", "one node"),
    Setting("transaction.state.log.min.isr", "1", "2", "kafka", "one node"),
    Setting("group.initial.rebalance.delay.ms", "0", "3000", "both",
            "the 3 s wait would dominate every classic-group figure"),
    Setting("group.consumer.heartbeat.interval.ms", "1000", "5000", "both",
            "KIP-848 members reconcile in heartbeat intervals; 1 s keeps that figure short"),
    Setting("group.consumer.min.heartbeat.interval.ms", "1000", "5000", "kafka",
            "Kafka refuses a heartbeat interval below its minimum"),
)
# group.consumer.assignment.interval.ms is left at Kafka's default (1000) on both: groupcoord batches target
# assignments as Kafka 4.3 does; the kip848_interval0 figure sets it to 0 on both. Kafka's
# group.consumer.assignor.offload.enable is not set: 4.3.1 defines the name but not the setting (its getter
# returns the default and nothing reads it), so the assignor runs on the coordinator thread either way.

# Differences left in place, each broker at its own default, printed with the results so that a figure
# is read knowing them.
DEFAULTS_THAT_DIFFER: tuple[str, ...] = (
    "durability: groupcoord fsyncs (fsync=batch: group commit; never where a row says so); Kafka does not "
    "fsync by default (log.flush.interval.messages unset), it relies on replication, so it is closest to never",
    "group.coordinator.append.linger.ms: Kafka -1 (append as soon as the coordinator is idle), groupcoord 0",
    "threads: Kafka runs its default network, I/O and coordinator thread pools on the one server core; "
    "groupcoord is one event loop",
)

# The same settings, spelled as groupcoord daemon options (servers.groupcoord keyword arguments).
GROUPCOORD_SETTINGS = {s.name.replace(".", "_"): s.value for s in SETTINGS_VS_DEFAULTS if s.applies_to == "both"}


class ProductionKafkaBroker(KafkaBroker):
    """KafkaBroker with production JVM flags, pinned to `cores` with taskset (the JVM then sizes its GC and
    compiler threads for those cores), and timed from exec of kafka.Kafka to its first ApiVersions answer."""

    def __init__(self, *args, cores: list[int] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.cores = cores
        self.exec_to_serving_s = float("nan")

    def _java(self, main_class: str, *args: str) -> list[str]:
        log4j = self.workdir / "log4j2.properties"
        pin = ["taskset", "-c", ",".join(map(str, self.cores))] if self.cores else []
        return [*pin, "java", *PRODUCTION_JVM_OPTIONS, f"-Dlog4j2.configurationFile={log4j}", "-cp",
                self.distribution.classpath, main_class, *args]

    def _wait_until_serving(self, deadline: float) -> None:
        # Called right after kafka.Kafka was spawned (storage format already done), so this times the
        # broker's own start-up; readiness is polled every 0.2 s by the reference helper.
        began = time.monotonic()
        super()._wait_until_serving(deadline)
        self.exec_to_serving_s = time.monotonic() - began


def kafka_config(settings: dict[str, str] | None = None) -> KafkaBrokerConfig:
    extra = {s.name: s.value for s in SETTINGS_VS_DEFAULTS} | (settings or {})
    return KafkaBrokerConfig(group_initial_rebalance_delay_ms=0, offsets_topic_num_partitions=50, extra=extra)


@contextmanager
def kafka(cores: list[int] | None, settings: dict[str, str] | None = None) -> Iterator[tuple[str, float]]:
    """Yields (bootstrap address, seconds from exec of kafka.Kafka to answering ApiVersions); a fresh
    KRaft data directory each time, deleted when the broker stops. ``settings``: a figure's own, on top."""
    broker = ProductionKafkaBroker(ensure_kafka(), kafka_config(settings), cores=cores)
    try:
        broker.start()
        yield broker.bootstrap_servers, broker.exec_to_serving_s
    finally:
        broker.stop()


KAFKA_LABEL = f"kafka {KAFKA_VERSION}"
