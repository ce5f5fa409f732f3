"""Consume-transform-produce: the workload a consumer group exists for, with a stock client end to end.

N records are produced (untimed) to an input topic of several partitions. Then a group of several members,
each its own process with a confluent-kafka (librdkafka) Consumer and Producer, reads them, produces every
record on to an output topic and commits as it goes: after each polled batch it flushes the producer and
commits the batch's offsets synchronously (at-least-once: a record's output is durable before its input
offset is committed). The figure is wall time from the moment the members subscribe until the group's
committed offsets cover all N records, which includes the group's first rebalance.

That first rebalance is a race: with ``group.initial.rebalance.delay.ms=0`` the first generation is formed
as soon as the broker runs the initial join's zero-delay timer, with whoever has joined by then; each later
member's join starts a rebalance that the members already in the group learn of only at their next Heartbeat
(librdkafka's ``heartbeat.interval.ms``, 3 s); cooperative-sticky then needs a second one to hand over the
revoked partitions. A run therefore costs 0, 3 or 6 s of waiting by how the members' joins fall around that
timer, on Kafka 4.3.1 as on groupcoord (the same rule), but the broker's own speed tilts it: the members' second
JoinGroups arrive 1-5 ms apart, groupcoord runs the timer ~0.2 ms after the first and Kafka 1-26 ms after
(its logs), so Kafka usually forms one generation of three and groupcoord one of one or two (docs/BENCHMARKS.md,
2026-12-01). At 50,000 records the first member often finishes the input alone before the others are let in.
``--formed`` measures the workload itself: the members pause every partition they are given until the group has
handed every member a share, and the clock starts when they are released; the line reports how long forming took
and how many assignments the members received on the way.

    python -m bench.ctp_bench --records 50000                       # starts its own groupcoord (fsync=batch)
    python -m bench.ctp_bench --records 50000 --bootstrap HOST:PORT # or measures any broker
    python -m bench.ctp_bench --records 500000 --formed            # from a formed group, not from subscribe

Every phase is bounded in time; members are pinned to the client cores.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
import uuid
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .memory_bench import server_pid
from .server_cpu import cpu_seconds
from .servers import groupcoord
from .wire_bench import _cores

PHASE_LIMIT_S = 600.0
READY_LIMIT_S = 60.0
POLL_BATCH = 1000


@dataclass(frozen=True)
class Combination:
    """How the group's members are configured: the issue's client test ran the same workload under six
    such assignor/protocol/membership combinations, one after the other."""

    name: str
    protocol: str = "classic"                  # group.protocol: classic or consumer (KIP-848)
    assignor: str = "cooperative-sticky"       # partition.assignment.strategy (classic only)
    static: bool = False                       # group.instance.id per member (KIP-345)


COMBINATIONS = (
    Combination("range", assignor="range"),
    Combination("cooperative-sticky"),
    Combination("range-static", assignor="range", static=True),
    Combination("cooperative-sticky-static", static=True),
    Combination("kip848", protocol="consumer"),
    Combination("kip848-static", protocol="consumer", static=True),
)


@dataclass
class CtpResult:
    records: int
    partitions: int
    members: int
    seconds: float
    output_records: int  # >= records: a record whose batch was not committed before a rebalance is redone
    assignments: int = 0  # assignment callbacks the members received: one per member per generation it gained in
    forming_s: float | None = None  # --formed: from subscribe until every member held a share (not in `seconds`)
    broker_cpu_s: float | None = None  # the broker process's CPU seconds within `seconds`, when its pid was given
    members_cpu_s: float | None = None  # the member processes' CPU seconds (all their threads) while they worked

    def line(self) -> str:
        formed = "" if self.forming_s is None else f" from a formed group (forming took {self.forming_s:.2f} s)"
        cpu = "" if self.broker_cpu_s is None else f", broker CPU {self.broker_cpu_s:.2f} s"
        if self.members_cpu_s is not None:
            cpu += f", members' CPU {self.members_cpu_s:.2f} s"
        return (f"consume-transform-produce {self.records:,} records, {self.partitions} partitions, "
                f"{self.members} members{formed}: {self.seconds:.2f} s ({self.records / self.seconds:,.0f} records/s), "
                f"{self.output_records:,} records out, {self.assignments} assignments received{cpu}")


def create_topics(bootstrap: str, names: list[str], partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, num_partitions=partitions, replication_factor=1) for n in names],
                                  operation_timeout=30, request_timeout=30)
    for future in futures.values():
        future.result(timeout=60)


def fill(bootstrap: str, topic: str, records: int, record_bytes: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5, "batch.size": 256 * 1024,
                         "enable.idempotence": False, "queue.buffering.max.messages": 200_000})
    payload = b"r" * record_bytes
    deadline = time.monotonic() + PHASE_LIMIT_S
    sent = 0
    while sent < records and time.monotonic() < deadline:
        try:
            producer.produce(topic, payload, key=str(sent).encode())
            sent += 1
        except BufferError:
            producer.poll(0.01)
        if sent % 1000 == 0:
            producer.poll(0)
    if producer.flush(PHASE_LIMIT_S) or sent < records:
        raise RuntimeError(f"filling {topic}: only {sent:,} of {records:,} records produced in time")


def watermarks(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ctp-watermarks-{uuid.uuid4().hex[:6]}"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
    finally:
        consumer.close()


def _member(bootstrap: str, group: str, source: str, sink: str, protocol: str, cores: list[int] | None,
            ready, go, stop, assignor: str = "cooperative-sticky", instance_id: str | None = None,
            start_delay_s: float = 0.0, index: int = 0, held=None, received=None, release=None, spent=None) -> None:
    """One group member: consume a batch, produce each record on, flush, commit the batch, repeat.

    ``held[index]`` tracks how many partitions this member owns and ``received`` counts the assignments it
    was given. With ``release`` (the --formed mode) every partition is paused as it is assigned, inside the
    assignment callback so that nothing is fetched for it, until ``release`` is set. ``spent[index]``: this
    process's CPU seconds (librdkafka's threads included) from the clock's start (go, or release) until stop."""
    if cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cores)
    settings = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                "auto.offset.reset": "earliest", "group.protocol": protocol}
    if protocol == "classic":
        settings["partition.assignment.strategy"] = assignor
    if instance_id is not None:
        settings["group.instance.id"] = instance_id
    consumer = Consumer(settings)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "enable.idempotence": False,
                         "queue.buffering.max.messages": 200_000})
    ready.release()
    if not go.wait(READY_LIMIT_S):
        return
    if start_delay_s:
        time.sleep(start_delay_s)  # members joining one after another: the group rebalances as each arrives
    owned: set[int] = set()
    released = release is None
    cooperative = protocol == "consumer" or assignor == "cooperative-sticky"  # incremental assign and revoke

    def on_assign(c: Consumer, partitions: list[TopicPartition]) -> None:
        if cooperative:
            c.incremental_assign(partitions)
        else:
            owned.clear()
            c.assign(partitions)
        if not released:
            c.pause(partitions)
        owned.update(p.partition for p in partitions)
        if held is not None:
            held[index] = len(owned)
        if received is not None:
            with received.get_lock():
                received.value += 1

    def on_revoke(c: Consumer, partitions: list[TopicPartition]) -> None:
        if cooperative:
            c.incremental_unassign(partitions)
        else:
            c.unassign()
        owned.difference_update(p.partition for p in partitions)
        if held is not None:
            held[index] = len(owned)

    cpu_from = time.process_time()
    consumer.subscribe([source], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    deadline = time.monotonic() + PHASE_LIMIT_S
    try:
        while not stop.is_set() and time.monotonic() < deadline:
            if not released and release.is_set():
                released = True  # assignments from here on are not paused (callbacks run inside consume())
                cpu_from = time.process_time()
                consumer.resume(consumer.assignment())
            batch = consumer.consume(num_messages=POLL_BATCH, timeout=0.2 if released else 0.05)
            ends: dict[int, int] = {}
            for message in batch:
                if message.error() is not None:
                    continue
                producer.produce(sink, message.value(), key=message.key())
                ends[message.partition()] = message.offset() + 1
            if not ends:
                continue
            producer.flush(PHASE_LIMIT_S)
            try:
                consumer.commit(offsets=[TopicPartition(source, p, o) for p, o in ends.items()], asynchronous=False)
            except KafkaException:
                pass  # lost the partitions in a rebalance: their new owner redoes the batch (at-least-once)
        if spent is not None:
            spent[index] = time.process_time() - cpu_from
    finally:
        producer.flush(30)
        consumer.close()


def committed_total(probe: Consumer, source: str, partitions: int) -> int:
    """What the group has committed on `source` so far; 0 while the coordinator cannot say yet."""
    try:
        offsets = probe.committed([TopicPartition(source, p) for p in range(partitions)], timeout=10)
    except KafkaException:
        return 0
    return sum(max(tp.offset, 0) for tp in offsets)


def _until_formed(held, partitions: int, crew: list, deadline: float) -> float:
    """Waits until every member owns at least one partition and together they own all of them; returns when."""
    while True:
        shares = list(held)
        if sum(shares) == partitions and min(shares) >= 1:
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the group did not give every member a share in time: {shares}")
        if not any(p.is_alive() for p in crew):
            raise RuntimeError("every group member exited before the group formed")
        time.sleep(0.005)


def run(bootstrap: str, records: int, partitions: int = 6, members: int = 3, record_bytes: int = 100,
        protocol: str = "classic", client_cores: list[int] | None = None,
        combination: Combination | None = None, stagger_s: float = 0.0, formed: bool = False,
        broker_pid: int | None = None) -> CtpResult:
    """``combination`` (else classic cooperative-sticky, or ``protocol``) configures the members;
    ``stagger_s`` starts member i that many seconds after member i-1, so the group rebalances while it works;
    ``formed`` starts the clock once every member holds a share of the partitions (see the module's text);
    ``broker_pid``: the broker's process, whose CPU seconds while the clock runs are reported (the members'
    own CPU is most of a run on a small machine, so this says how much of it the broker can change)."""
    combination = combination or Combination(protocol, protocol=protocol)
    stamp = uuid.uuid4().hex[:8]
    source, sink, group = f"ctp-in-{stamp}", f"ctp-out-{stamp}", f"ctp-group-{stamp}"
    create_topics(bootstrap, [source, sink], partitions)
    fill(bootstrap, source, records, record_bytes)
    total = sum(watermarks(bootstrap, source, partitions).values())
    if total != records:
        raise RuntimeError(f"{source} holds {total:,} records, expected {records:,}")
    ctx = mp.get_context("spawn")
    ready, go, stop = ctx.Semaphore(0), ctx.Event(), ctx.Event()
    held, received, spent = ctx.Array("i", members), ctx.Value("i", 0), ctx.Array("d", members)
    release = ctx.Event() if formed else None
    crew = [ctx.Process(target=_member, args=(bootstrap, group, source, sink, combination.protocol, client_cores, ready,
                                              go, stop, combination.assignor,
                                              f"{group}-{i}" if combination.static else None, i * stagger_s,
                                              i, held, received, release, spent),
                        daemon=True) for i in range(members)]
    for process in crew:
        process.start()
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        for _ in crew:
            if not ready.acquire(timeout=READY_LIMIT_S):
                raise RuntimeError("a group member did not start in time")
        began = time.perf_counter()
        go.set()
        forming_s = None
        if release is not None:
            subscribed = began
            began = _until_formed(held, partitions, crew, subscribed + READY_LIMIT_S)
            forming_s = began - subscribed
            release.set()
        cpu_before = cpu_seconds(broker_pid) if broker_pid else None
        deadline = began + PHASE_LIMIT_S
        while committed_total(probe, source, partitions) < records:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"group did not commit {records:,} records within {PHASE_LIMIT_S:.0f} s")
            if not any(p.is_alive() for p in crew):
                raise RuntimeError("every group member exited before the input was consumed")
            time.sleep(0.05)
        elapsed = time.perf_counter() - began
        broker_cpu_s = cpu_seconds(broker_pid) - cpu_before if cpu_before is not None else None
    finally:
        stop.set()
        go.set()
        probe.close()
        for process in crew:
            process.join(60)
            if process.is_alive():
                process.kill()
                process.join(5)
    out = sum(watermarks(bootstrap, sink, partitions).values())
    return CtpResult(records, partitions, members, elapsed, out, received.value, forming_s, broker_cpu_s, sum(spent))


def run_combinations(bootstrap: str, records: int, partitions: int = 6, members: int = 3, record_bytes: int = 100,
                     client_cores: list[int] | None = None, stagger_s: float = 0.0,
                     combinations: tuple[Combination, ...] = COMBINATIONS) -> dict[str, CtpResult]:
    """The issue's shape: the same workload once per combination, each on fresh topics and a fresh group."""
    return {c.name: run(bootstrap, records, partitions, members, record_bytes, client_cores=client_cores,
                        combination=c, stagger_s=stagger_s) for c in combinations}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ctp_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=None, help="measure this broker instead of starting groupcoord")
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--record-bytes", type=int, default=100)
    parser.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    parser.add_argument("--fsync", choices=["always", "batch", "never"], default="batch")
    parser.add_argument("--combinations", action="store_true",
                        help="run the six assignor/protocol/static combinations one after another")
    parser.add_argument("--stagger", type=float, default=0.0, help="seconds between members joining")
    parser.add_argument("--formed", action="store_true",
                        help="start the clock once every member holds a share of the partitions")
    parser.add_argument("--initial-rebalance-delay-ms", type=int, default=0,
                        help="the started groupcoord's group.initial.rebalance.delay.ms (100 forms the group in "
                             "one generation, without the race)")
    ns = parser.parse_args(argv)
    server_cores, client_cores = _cores()

    def measure(address: str, pid: int) -> None:
        if ns.combinations:
            results = run_combinations(address, ns.records, ns.partitions, ns.members, ns.record_bytes, client_cores,
                                       ns.stagger)
            for name, result in results.items():
                print(f"{name:>26}: {result.line()}")
            print(f"six combinations: {sum(r.seconds for r in results.values()):.2f} s")
            return
        print(run(address, ns.records, ns.partitions, ns.members, ns.record_bytes, ns.group_protocol,
                  client_cores, stagger_s=ns.stagger, formed=ns.formed, broker_pid=pid).line())

    if ns.bootstrap:
        measure(ns.bootstrap, server_pid(ns.bootstrap))
        return
    with groupcoord(server_cores, fsync=ns.fsync, group_initial_rebalance_delay_ms=ns.initial_rebalance_delay_ms,
                    group_consumer_heartbeat_interval_ms=1000) as started:
        measure(started[0], started.pid)


if __name__ == "__main__":
    main()
