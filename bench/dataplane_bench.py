"""Data-plane figures with a stock client (confluent-kafka / librdkafka) over loopback:

- produce throughput, records/s and MB/s, 1 KiB records, acks=1 and acks=-1 (single node: both wait for
  the same durable append, so they should match);
- fetch throughput, MB/s, reading the produced partition from the start, with 8 MiB per partition per answer
  (the figure since the first sitting) and with the consumer's default 1 MiB;
- end-to-end latency producer -> consumer, p50/p99, at a steady modest rate with linger.ms=0.

Every phase is bounded by a record count and a time limit. The broker runs as a child process pinned to
its own core, with the fsync policy printed (default: batch, the daemon's default: group commit).

    python -m bench.dataplane_bench [--fsync batch|always|never] [--records N] [--bootstrap HOST:PORT]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time
import uuid
from typing import Iterator

from confluent_kafka import Consumer, Producer, TopicPartition

from .servers import groupcoord
from .wire_bench import _cores

RECORD = 1024
PHASE_LIMIT_S = 30.0


def produce(bootstrap: str, topic: str, records: int, acks: str) -> tuple[int, float]:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5, "batch.size": 256 * 1024,
                         "compression.type": "none", "enable.idempotence": False,
                         "queue.buffering.max.messages": 200_000})
    payload = b"x" * RECORD
    failures: list[object] = []

    def delivered(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    started = time.perf_counter()
    deadline = started + PHASE_LIMIT_S
    sent = 0
    while sent < records and time.perf_counter() < deadline:
        try:
            producer.produce(topic, payload, on_delivery=delivered)
            sent += 1
        except BufferError:
            producer.poll(0.01)
        if sent % 1000 == 0:
            producer.poll(0)
    left = producer.flush(PHASE_LIMIT_S)
    elapsed = time.perf_counter() - started
    if failures or left:
        raise SystemExit(f"produce failed: {len(failures)} errors, {left} undelivered ({failures[:1]})")
    return sent, elapsed


PARTITION_FETCH_BYTES = 8 * 1024 * 1024
"""The consumer's max.partition.fetch.bytes in the fetch phase (librdkafka's default is 1 MiB): what this bench has
always asked for, kept so that its figures stay comparable across sittings."""

FETCH_READS: tuple[tuple[str, int | None, str], ...] = (
    ("fetch", PARTITION_FETCH_BYTES, "max.partition.fetch.bytes 8 MiB"),
    ("fetch_default", None, "the consumer's defaults (max.partition.fetch.bytes 1 MiB)"),
)
"""The fetch phase's reads of the produced partition, in this order: (figure name, ``fetch``'s
``partition_fetch_bytes``, what it is). bench.compare's ``dataplane`` figure and this bench's own report both run
these."""


def fetch(bootstrap: str, topic: str, records: int,
          partition_fetch_bytes: int | None = PARTITION_FETCH_BYTES) -> tuple[int, int, float]:
    """(records, value bytes, seconds) of reading ``topic``'s partition 0 from the start (assigned, nothing committed).
    ``partition_fetch_bytes``: the consumer's max.partition.fetch.bytes; None leaves librdkafka's default (1 MiB).
    The answer size matters to the consumer's own CPU: every answer is one buffer of that size in its prefetch
    queue, and against a broker that answers at once the queue holds several, each of fresh pages (minor faults)."""
    settings = {"bootstrap.servers": bootstrap, "group.id": f"bench-{topic}",
                "enable.auto.commit": False, "fetch.max.bytes": 50 * 1024 * 1024}
    if partition_fetch_bytes is not None:
        settings["max.partition.fetch.bytes"] = partition_fetch_bytes
    consumer = Consumer(settings)
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = nbytes = 0
    started = time.perf_counter()
    deadline = started + PHASE_LIMIT_S
    while got < records and time.perf_counter() < deadline:
        for message in consumer.consume(num_messages=10_000, timeout=0.5):
            if message.error() is None:
                got += 1
                nbytes += len(message.value())
    elapsed = time.perf_counter() - started
    consumer.close()
    return got, nbytes, elapsed


def latency(bootstrap: str, topic: str, count: int, rate: int) -> list[float]:
    """Milliseconds from produce() to the consumer seeing the record; the consumer polls in its own
    thread so that the sending loop does not delay it."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    producer.produce(topic, b"warm-up")
    producer.flush(10)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"lat-{topic}", "enable.auto.commit": False,
                         "fetch.wait.max.ms": 500, "fetch.min.bytes": 1})
    consumer.assign([TopicPartition(topic, 0, 1)])
    samples: list[float] = []
    deadline = time.perf_counter() + PHASE_LIMIT_S

    def consume() -> None:
        while len(samples) < count and time.perf_counter() < deadline:
            message = consumer.poll(0.1)       # consume(n) would wait for n messages or the timeout
            if message is not None and message.error() is None:
                samples.append((time.perf_counter() - float(message.value())) * 1000)

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    time.sleep(1.0)                       # let the consumer connect and park its first fetch
    interval = 1.0 / rate
    next_send = time.perf_counter()
    for _ in range(count):
        if time.perf_counter() > deadline:
            break
        pause = next_send - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        producer.produce(topic, str(time.perf_counter()).encode())
        producer.poll(0)
        next_send += interval
    producer.flush(10)
    reader.join(PHASE_LIMIT_S)
    consumer.close()
    return samples


@contextlib.contextmanager
def broker(bootstrap: str | None, fsync: str) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    server_cores, _client_cores = _cores()
    with groupcoord(server_cores, fsync=fsync) as (address, _startup):
        yield address


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", default=None, help="measure this broker instead of starting one")
    parser.add_argument("--fsync", default="batch", choices=["always", "batch", "never"])
    parser.add_argument("--records", type=int, default=100_000, help="records per produce phase")
    parser.add_argument("--latency-records", type=int, default=2_000)
    parser.add_argument("--latency-rate", type=int, default=500, help="records/s in the latency phase")
    args = parser.parse_args()
    with broker(args.bootstrap, args.fsync) as bootstrap:
        print(f"broker {bootstrap}  fsync={args.fsync if not args.bootstrap else 'as configured'}  "
              f"record={RECORD} B  client=confluent-kafka (librdkafka)")
        produce(bootstrap, f"bench-warm-up-{uuid.uuid4().hex[:6]}", min(args.records, 20_000), "1")
        topics = {}
        for acks in ("1", "all"):
            topic = f"bench-acks{acks}-{uuid.uuid4().hex[:6]}"
            topics[acks] = topic
            sent, elapsed = produce(bootstrap, topic, args.records, acks)
            label = "-1" if acks == "all" else acks
            print(f"produce acks={label:>2}: {sent:>8} records in {elapsed:6.2f} s  "
                  f"{sent / elapsed:>10,.0f} records/s  {sent * RECORD / elapsed / 1e6:7.1f} MB/s")
        for _name, partition_fetch_bytes, what in FETCH_READS:
            got, nbytes, elapsed = fetch(bootstrap, topics["1"], args.records, partition_fetch_bytes)
            print(f"fetch        : {got:>8} records in {elapsed:6.2f} s  {got / elapsed:>10,.0f} records/s  "
                  f"{nbytes / elapsed / 1e6:7.1f} MB/s  ({what})")
        samples = latency(bootstrap, f"bench-latency-{uuid.uuid4().hex[:6]}", args.latency_records,
                          args.latency_rate)
        if samples:
            ordered = sorted(samples)
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
            print(f"end-to-end   : {len(samples)} records at {args.latency_rate}/s  "
                  f"p50 {statistics.median(ordered):.2f} ms  p99 {p99:.2f} ms  (acks=-1, linger.ms=0, fetch.wait.max.ms=500)")


if __name__ == "__main__":
    main()
