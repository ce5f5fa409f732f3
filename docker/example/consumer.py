"""Example workload for the compose file: a producer and the members of one consumer group.

It is stock kafka-python on purpose: nothing here knows it talks to groupcoord rather than Kafka.
Both roles stop on SIGTERM/SIGINT and after --max-seconds or --count, so a demo never runs unbounded.

    python consumer.py produce --topic orders --rate 5
    python consumer.py consume --topic orders --group orders-app
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time

from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

BOOTSTRAP = os.environ.get("BOOTSTRAP_SERVERS", "localhost:9092")


def security() -> dict:
    """kafka-python's security options from the environment (the compose file's SASL_SSL example sets them);
    none for a plaintext broker."""
    protocol = os.environ.get("SECURITY_PROTOCOL", "PLAINTEXT")
    options: dict = {"security_protocol": protocol}
    if protocol.startswith("SASL"):
        password_file = os.environ.get("SASL_PASSWORD_FILE")
        password = open(password_file).read().strip() if password_file else os.environ.get("SASL_PASSWORD", "")
        options.update(sasl_mechanism=os.environ.get("SASL_MECHANISM", "SCRAM-SHA-512"),
                       sasl_plain_username=os.environ.get("SASL_USERNAME", ""), sasl_plain_password=password)
    if protocol.endswith("SSL"):
        options["ssl_cafile"] = os.environ.get("SSL_CAFILE")
    return options
CONNECT_ATTEMPTS = 30


class Stop:
    """Set by SIGTERM (docker stop) so consumers leave the group cleanly instead of waiting for a timeout."""

    requested = False

    @classmethod
    def install(cls) -> None:
        def request(signum, frame):
            cls.requested = True

        signal.signal(signal.SIGTERM, request)
        signal.signal(signal.SIGINT, request)


def with_retries(make):
    """The broker may still be starting when the container does; retry the first connection a bounded time."""
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            return make()
        except KafkaError:  # NoBrokersAvailable (kafka-python 2) / connection errors (3)
            print(f"waiting for {BOOTSTRAP} ({attempt + 1}/{CONNECT_ATTEMPTS})", flush=True)
            time.sleep(1)
    sys.exit(f"no broker at {BOOTSTRAP}")


def ensure_topic(topic: str, partitions: int) -> None:
    admin = with_retries(lambda: KafkaAdminClient(bootstrap_servers=BOOTSTRAP, client_id="example-admin", **security()))
    try:
        admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
        print(f"created topic {topic} with {partitions} partitions", flush=True)
    except TopicAlreadyExistsError:
        pass
    finally:
        admin.close()


def produce(args: argparse.Namespace) -> None:
    ensure_topic(args.topic, args.partitions)
    producer = with_retries(lambda: KafkaProducer(bootstrap_servers=BOOTSTRAP, client_id="example-producer", **security()))
    deadline = time.monotonic() + args.max_seconds
    sent = 0
    while not Stop.requested and sent < args.count and time.monotonic() < deadline:
        producer.send(args.topic, key=str(sent % 16).encode(), value=f"order {sent}".encode())
        sent += 1
        if sent % 50 == 0:
            print(f"produced {sent}", flush=True)
        time.sleep(1 / args.rate)
    producer.flush(10)
    producer.close()
    print(f"producer done after {sent} records", flush=True)


def consume(args: argparse.Namespace) -> None:
    consumer = with_retries(lambda: KafkaConsumer(
        args.topic, bootstrap_servers=BOOTSTRAP, group_id=args.group, **security(), client_id=f"example-{socket.gethostname()}",
        auto_offset_reset="earliest", enable_auto_commit=True,
    ))
    deadline = time.monotonic() + args.max_seconds
    seen = 0
    while not Stop.requested and seen < args.count and time.monotonic() < deadline:
        for tp, records in consumer.poll(timeout_ms=1000).items():
            seen += len(records)
            print(f"{tp.topic}-{tp.partition}: {len(records)} records, last offset {records[-1].offset}", flush=True)
    consumer.close()  # commits and sends LeaveGroup, so the other member takes over at once
    print(f"consumer done after {seen} records", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="role", required=True)
    for role in ("produce", "consume"):
        p = sub.add_parser(role)
        p.add_argument("--topic", default="orders")
        p.add_argument("--count", type=int, default=100_000, help="stop after this many records")
        p.add_argument("--max-seconds", type=float, default=3600, help="stop after this long")
        if role == "produce":
            p.add_argument("--rate", type=float, default=5, help="records per second")
            p.add_argument("--partitions", type=int, default=2)
        else:
            p.add_argument("--group", default="orders-app")
    args = parser.parse_args()
    Stop.install()
    produce(args) if args.role == "produce" else consume(args)


if __name__ == "__main__":
    main()
