"""Warms every cache the reference suites need, so test runs start fast and work offline afterwards:
the Kafka jars (~/.cache/groupcoord/kafka-<version>/) and the Java module's Maven dependencies (~/.m2).

    .venv/bin/python -m tests.reference.prefetch
"""

from __future__ import annotations

import sys

from tests.reference.java_module import failure_report, run_java_consumer_group_test
from tests.reference.kafka_broker import SHARED_BROKER
from tests.reference.kafka_distribution import ReferenceUnavailable, ensure_kafka_tools


def main() -> int:
    try:
        tools = ensure_kafka_tools()
        print(f"Kafka tools {tools.version} in {tools.home}")
        broker = SHARED_BROKER.acquire()
    except ReferenceUnavailable as exc:
        print(f"Kafka reference unavailable: {exc}", file=sys.stderr)
        return 1
    try:
        print(f"Kafka {broker.distribution.version} started in {broker.started_in_s:.1f} s "
              f"at {broker.bootstrap_servers}")
        done = run_java_consumer_group_test(broker.bootstrap_servers)
        if done.returncode != 0:
            print(failure_report(done), file=sys.stderr)
            return 1
        print("Java consumer-group module resolved and passed against Kafka")
        return 0
    finally:
        SHARED_BROKER.release()


if __name__ == "__main__":
    sys.exit(main())
