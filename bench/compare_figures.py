"""The figures `python -m bench.compare` measures, each as one function of a bootstrap address, built from the
existing load generators (loadgen, group_bench, consumer_group_bench, dataplane_bench, ctp_bench) so that the
side-by-side numbers are the same measurements as the single-broker benches.

A figure names the rows it contributes to the table; its `measure` returns one value per row key. Every
measurement is bounded in count and time (FIGURE_LIMIT_S on top of each bench's own limits).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import Callable

from . import consumer_group_bench, ctp_bench, dataplane_bench, franz_etl, group_bench, memory_bench, txn_bench
from .cpu_sampler import BUSY
from .loadgen import run_load
from .requests import FETCH_TOPIC
from .server_cpu import cpu_seconds

FIGURE_LIMIT_S = 900.0
CONNECTIONS, PIPELINE, LOAD_PROCESSES = 64, 8, 2
FETCH_CONNECTIONS = 8  # consumers, each with one Fetch in flight, as a consumer keeps per broker


@dataclass(frozen=True)
class Sizes:
    seconds: float               # each request-rate run
    warmup_seconds: float        # unmeasured load first, so a JIT is warm (the same for both brokers)
    big_group_members: int
    small_groups: int
    kip848_members: int
    kip848_partitions: int
    dataplane_records: int
    ctp_records: tuple[int, ...]
    ctp_partitions: int = 6
    ctp_members: int = 3
    etl_records: tuple[int, ...] = (50_000, 500_000)
    memory_groups: int = 10_000
    memory_partitions: int = 100
    txn_partitions: tuple[int, ...] = (1, 8)


FULL = Sizes(seconds=5.0, warmup_seconds=2.0, big_group_members=1000, small_groups=10_000, kip848_members=1000,
             kip848_partitions=1000, dataplane_records=100_000, ctp_records=(50_000, 500_000))
QUICK = Sizes(seconds=1.0, warmup_seconds=1.0, big_group_members=50, small_groups=100, kip848_members=50,
              kip848_partitions=50, dataplane_records=5_000, ctp_records=(2_000, 10_000), memory_groups=200,
              memory_partitions=10, etl_records=(2_000,))


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    fsync: str = "batch"  # which groupcoord run the groupcoord column is read from


@dataclass(frozen=True)
class Figure:
    name: str
    rows: Callable[[Sizes], list[Row]]
    measure: Callable[[str, Sizes, dict, list[int] | None], dict[str, float]]
    groupcoord_fsyncs: tuple[str, ...] = ("batch",)
    needs_ceiling: bool = False
    description: str = ""
    # Broker settings (Kafka's names) this figure's brokers run with on top of kafka_server's, on both: a
    # figure measured away from Kafka's default says so in its own rows.
    settings: tuple[tuple[str, str], ...] = ()


def _rate(bootstrap: str, request: str, sizes: Sizes, client_cores: list[int] | None) -> dict[str, float]:
    """`request`'s rate, with its latency percentiles for the JSON (the table shows the rate)."""
    tag = uuid.uuid4().hex[:6]
    run_load(bootstrap, request, CONNECTIONS, PIPELINE, sizes.warmup_seconds, processes=LOAD_PROCESSES,
             client_cores=client_cores, tag=f"warm-{tag}")
    result = run_load(bootstrap, request, CONNECTIONS, PIPELINE, sizes.seconds, processes=LOAD_PROCESSES,
                      client_cores=client_cores, tag=tag)
    return {request: result.rate, f"{request}_p50_ms": result.p50_ms, f"{request}_p99_ms": result.p99_ms}


def ceiling(address: str, sizes: Sizes, client_cores: list[int] | None) -> float:
    """The bare uvloop server's rate for the same connection count and depth, measured in the same run."""
    return run_load(address, "api_versions", CONNECTIONS, PIPELINE, sizes.seconds, processes=LOAD_PROCESSES,
                    client_cores=client_cores).rate


def _heartbeat(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    figures = _rate(bootstrap, "heartbeat", sizes, client_cores)
    return {**figures, "heartbeat_per_ceiling": figures["heartbeat"] / shared["ceiling"]}


def _commit(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    return _rate(bootstrap, "offset_commit", sizes, client_cores)


def _bounded(coroutine, run=asyncio.run):
    return run(asyncio.wait_for(coroutine, FIGURE_LIMIT_S))


def _big_group(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    seconds, _generation = _bounded(group_bench.big_group(bootstrap, sizes.big_group_members))
    return {"big_group_ms": seconds * 1000}


def _small_groups(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    return {"small_groups_s": _bounded(group_bench.many_groups(bootstrap, sizes.small_groups), group_bench.run_client)}


def _kip848(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None,
            prefix: str = "kip848", java_epoch_rule: bool = False) -> dict[str, float]:
    joined, settled = _bounded(consumer_group_bench.run(bootstrap, sizes.kip848_members, sizes.kip848_partitions,
                                                        java_epoch_rule=java_epoch_rule))
    return {f"{prefix}_reconciled_s": joined, f"{prefix}_after_leave_s": settled}


def _kip848_java(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    return _kip848(bootstrap, sizes, shared, client_cores, prefix="kip848_java", java_epoch_rule=True)


def _kip848_interval0(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    return _kip848(bootstrap, sizes, shared, client_cores, prefix="kip848_interval0")


def _dataplane(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    stamp = uuid.uuid4().hex[:6]
    warm_up, topic = f"bench-warm-up-{stamp}", f"bench-acks1-{stamp}"
    ctp_bench.create_topics(bootstrap, [warm_up, topic], 1)  # created up front: auto-creation is not the figure
    dataplane_bench.produce(bootstrap, warm_up, min(sizes.dataplane_records, 20_000), "1")
    sent, produce_s = dataplane_bench.produce(bootstrap, topic, sizes.dataplane_records, "1")
    pid = memory_bench.server_pid(bootstrap)
    figures = {"produce_mb_s": sent * dataplane_bench.RECORD / produce_s / 1e6}
    # The same partition read twice, in this order on both brokers: with the bench's 8 MiB per partition (its
    # figure since the first sitting), then with the consumer's default (1 MiB).
    for prefix, partition_fetch_bytes, _what in dataplane_bench.FETCH_READS:
        figures.update(_fetch(bootstrap, topic, sent, pid, prefix, partition_fetch_bytes))
    return figures


def _fetch(bootstrap: str, topic: str, sent: int, pid: int, prefix: str,
           partition_fetch_bytes: int | None) -> dict[str, float]:
    """One read of ``topic`` from the start by the bench's consumer (``_dataplane``'s helper, not a figure of its
    own): the rate and the consumer's and the broker's CPU per MB, as ``{prefix}_*`` figures."""
    broker_before, consumer_before = cpu_seconds(pid), time.process_time()
    got, nbytes, fetch_s = dataplane_bench.fetch(bootstrap, topic, sent, partition_fetch_bytes)
    consumer_cpu_s, broker_cpu_s = time.process_time() - consumer_before, cpu_seconds(pid) - broker_before
    if got < sent:
        raise RuntimeError(f"fetched {got:,} of {sent:,} records within the time limit")
    # The consumer runs in this process (librdkafka's threads too), pinned to the client core: its CPU per MB
    # beside the broker's says which of the two the fetch rate waits for.
    return {f"{prefix}_mb_s": nbytes / fetch_s / 1e6,
            f"{prefix}_consumer_ms_per_mb": consumer_cpu_s / (nbytes / 1e6) * 1e3,
            f"{prefix}_broker_ms_per_mb": broker_cpu_s / (nbytes / 1e6) * 1e3}


def _fetch_wire(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    """Fetch served to the wire load generator, which skips the answers' bodies, so that the broker rather
    than a consumer's per-record work bounds the rate (the `dataplane` figure's Python consumer spends
    ~1.5 ms of its core per MB on either broker). The broker's CPU per MB is kept beside the rate."""
    ctp_bench.create_topics(bootstrap, [FETCH_TOPIC], 1)
    dataplane_bench.produce(bootstrap, FETCH_TOPIC, sizes.dataplane_records, "1")
    run_load(bootstrap, "fetch", FETCH_CONNECTIONS, 1, sizes.warmup_seconds, processes=LOAD_PROCESSES,
             client_cores=client_cores, tag="warm")
    pid = memory_bench.server_pid(bootstrap)
    before = cpu_seconds(pid)
    result = run_load(bootstrap, "fetch", FETCH_CONNECTIONS, 1, sizes.seconds, processes=LOAD_PROCESSES,
                      client_cores=client_cores)
    broker_cpu_s = cpu_seconds(pid) - before
    return {"fetch_wire_mb_s": result.mb_s, "fetch_wire_broker_ms_per_mb": broker_cpu_s / (result.nbytes / 1e6) * 1e3}


def _ctp(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    """Each size twice: timed from subscribe (group formation included, a race between the members' joins and
    the initial join's zero-delay timer, which the faster broker runs sooner: bench.ctp_bench; the JSON keeps
    the assignments the members received), and from a formed group, with the broker's CPU seconds in that run
    (the members' own CPU is most of the rest)."""
    figures = {}
    pid = memory_bench.server_pid(bootstrap)
    for records in sizes.ctp_records:
        figures.update(_ctp_from_subscribe(bootstrap, records, sizes, client_cores, "ctp"))
        formed = ctp_bench.run(bootstrap, records, sizes.ctp_partitions, sizes.ctp_members, client_cores=client_cores,
                               formed=True, broker_pid=pid)
        figures[f"ctp_formed_{records}_s"] = formed.seconds
        figures[f"ctp_formed_{records}_broker_cpu_s"] = formed.broker_cpu_s
        figures[f"ctp_formed_{records}_members_cpu_s"] = formed.members_cpu_s
    return figures


def _ctp_delay100(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    """From subscribe, with a 100 ms initial rebalance delay on both brokers: members that start together join
    one generation, so the figure is the workload's and not the formation race's."""
    figures = {}
    for records in sizes.ctp_records:
        figures.update(_ctp_from_subscribe(bootstrap, records, sizes, client_cores, "ctp_delay100"))
    return figures


def _ctp_from_subscribe(bootstrap: str, records: int, sizes: Sizes, client_cores: list[int] | None,
                        prefix: str) -> dict[str, float]:
    """One ctp run timed from subscribe: its seconds and the assignments its members received."""
    result = ctp_bench.run(bootstrap, records, sizes.ctp_partitions, sizes.ctp_members, client_cores=client_cores)
    return {f"{prefix}_{records}_s": result.seconds, f"{prefix}_{records}_assignments": result.assignments}


def _ctp_combinations(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    """The issue's client test: the same workload under each of six assignor/protocol/static combinations,
    one after another (fresh topics and group each); the row is their sum, the JSON keeps each one."""
    figures = {}
    for records in sizes.ctp_records:
        results = ctp_bench.run_combinations(bootstrap, records, sizes.ctp_partitions, sizes.ctp_members,
                                             client_cores=client_cores)
        figures[f"ctp6_{records}_s"] = sum(r.seconds for r in results.values())
        figures.update({f"ctp6_{records}_{name}_s": r.seconds for name, r in results.items()})
    return figures


def _franz_etl(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None,
               records_run: tuple[int, ...] | None = None, prefix: str = "franz_etl") -> dict[str, float]:
    """franz-go's TestGroupETL, the issue's own client test, at each size in turn on the one broker (as a test
    suite runs its tests): its wall time; the client's and the broker's CPU in it, with the seconds each one's
    core was saturated (which of the two bounds the test, and in which phases); and each of its six combinations'
    own time in the JSON."""
    figures = {}
    pid = memory_bench.server_pid(bootstrap)
    for records in sizes.etl_records if records_run is None else records_run:
        result = franz_etl.run(bootstrap, records, client_cores, broker_pid=pid)
        figures[f"{prefix}_{records}_s"] = result.seconds
        for side, use in (("client", result.client), ("broker", result.broker)):
            assert use is not None  # (the broker's pid was given)
            figures[f"{prefix}_{records}_{side}_cpu_s"] = use.cpu_s
            figures[f"{prefix}_{records}_{side}_saturated_s"] = use.saturated_s
        figures.update({f"{prefix}_{records}_{name.replace('/', '_')}_s": seconds
                        for name, seconds in result.subtests.items()})
    return figures


def _franz_etl_fresh(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    """The largest TestGroupETL alone, the broker's first test. Why a figure of its own: Kafka 4.3.1 runs the
    test markedly slower when it is not the broker's first (500,000 records: 45.5 then 64.1 s on one broker, its
    CPU 44.5 then 56.4 s; after the 50,000-record test 66.4 s, against 44.9 s fresh), groupcoord about the same
    (50.6 then 54.7 s), so the sequence ``franz_etl`` runs favours groupcoord; this is Kafka at its best."""
    return _franz_etl(bootstrap, sizes, shared, client_cores, records_run=sizes.etl_records[-1:],
                      prefix="franz_etl_fresh")


def _memory(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    """The broker process's RSS before and after `memory_groups` x `memory_partitions` standalone commits
    (bench.memory_bench's first phase; for Kafka, the JVM's RSS with its 1 GiB heap)."""
    pid = memory_bench.server_pid(bootstrap)
    before = memory_bench.settle(pid)
    asyncio.run(asyncio.wait_for(memory_bench.commit_offsets(bootstrap, sizes.memory_groups, sizes.memory_partitions),
                                 FIGURE_LIMIT_S))
    after = memory_bench.settle(pid)
    offsets = sizes.memory_groups * sizes.memory_partitions
    return {"rss_after_commits_mb": after / 2**20, "bytes_per_offset": (after - before) / offsets}


def _transactions(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    return {f"txn_{k}p_per_s": txn_bench.transactions_per_second(bootstrap, k, sizes.seconds, sizes.warmup_seconds)
            for k in sizes.txn_partitions}


def _startup(bootstrap: str, sizes: Sizes, shared: dict, client_cores: list[int] | None) -> dict[str, float]:
    return {}  # the harness records every start-up; this figure only asks for starts of its own


def _at_both_fsyncs(key: str, label: str, unit: str, higher_is_better: bool) -> list[Row]:
    """One figure's two rows, groupcoord at fsync=batch and at fsync=never, each beside the same Kafka column (the
    figure runs groupcoord at both: ``groupcoord_fsyncs=("batch", "never")``)."""
    return [Row(key, f"{label}, groupcoord fsync={fsync}", unit, higher_is_better, fsync=fsync)
            for fsync in ("batch", "never")]


def _heartbeat_rows(sizes: Sizes) -> list[Row]:
    return [Row("heartbeat", f"Heartbeat, {CONNECTIONS} conns x {PIPELINE} in flight", "req/s", True),
            Row("heartbeat_per_ceiling", "Heartbeat / bare uvloop ceiling (same run)", "x", True)]


def _etl_rows(prefix: str, records: int, when: str) -> list[Row]:
    """A TestGroupETL run's rows: its wall time, then the client's and the broker's CPU and saturated seconds."""
    return [
        Row(f"{prefix}_{records}_s", f"franz-go TestGroupETL, {records:,} records (6 combinations, 3-level chains), "
                                     f"{when}", "s", False),
        Row(f"{prefix}_{records}_client_cpu_s", "  the client's CPU seconds (every client of the test, one core)", "s",
            False),
        Row(f"{prefix}_{records}_client_saturated_s", f"    seconds with the client's core >= {BUSY} busy", "s", False),
        Row(f"{prefix}_{records}_broker_cpu_s", "  broker CPU seconds in it", "s", False),
        Row(f"{prefix}_{records}_broker_saturated_s", f"    seconds with the broker's core >= {BUSY} busy", "s", False)]


FIGURES: dict[str, Figure] = {f.name: f for f in (
    Figure("heartbeat", _heartbeat_rows, _heartbeat, needs_ceiling=True,
           description="Heartbeat of a valid member of a single-member classic group (bench.loadgen)"),
    Figure("commit", lambda s: _at_both_fsyncs("offset_commit", f"OffsetCommit standalone, {CONNECTIONS} x {PIPELINE}",
                                                "req/s", True),
           _commit, groupcoord_fsyncs=("batch", "never"),
           description="OffsetCommit v8, generation -1, one partition per group (bench.loadgen)"),
    # The group formations also at fsync=never: Kafka writes the group records without an fsync (log.flush.* unset:
    # it leaves durability to replication), so that is the like-for-like run; fsync=batch answers only once the
    # records are on disk, stricter than Kafka.
    Figure("big_group", lambda s: _at_both_fsyncs(
        "big_group_ms", f"classic group of {s.big_group_members:,} members Stable", "ms", False),
           _big_group, groupcoord_fsyncs=("batch", "never"),
           description="one connection per member, from the JoinGroups to Stable (bench.group_bench)"),
    Figure("small_groups", lambda s: _at_both_fsyncs(
        "small_groups_s", f"{s.small_groups:,} classic groups of 3 all Stable", "s", False),
           _small_groups, groupcoord_fsyncs=("batch", "never"), description="200 at a time (bench.group_bench)"),
    Figure("kip848", lambda s: [
        Row("kip848_reconciled_s", f"KIP-848 group {s.kip848_members:,} members / {s.kip848_partitions:,} partitions "
                                   "reconciled", "s", False),
        Row("kip848_after_leave_s", "  then a quarter leave: the rest reconciled", "s", False)],
           _kip848, description="one connection per member (bench.consumer_group_bench), both brokers at Kafka's "
                                "group.consumer.assignment.interval.ms (1000)"),
    Figure("kip848_java", lambda s: [
        Row("kip848_java_reconciled_s", f"KIP-848 group {s.kip848_members:,} / {s.kip848_partitions:,}, members "
                                        "heartbeating early only for a new assignment (Java's rule), reconciled",
            "s", False),
        Row("kip848_java_after_leave_s", "  then a quarter leave: the rest reconciled", "s", False)],
           _kip848_java, description="the kip848 figure with the Java client's rule for an epoch bump that brings "
                                     "no new partitions: wait the interval"),
    Figure("kip848_interval0", lambda s: [
        Row("kip848_interval0_reconciled_s", f"KIP-848 group {s.kip848_members:,} / {s.kip848_partitions:,}, "
                                             "assignment.interval.ms=0, reconciled", "s", False),
        Row("kip848_interval0_after_leave_s", "  then a quarter leave: the rest reconciled", "s", False)],
           _kip848_interval0, settings=(("group.consumer.assignment.interval.ms", "0"),),
           description="the same, both brokers computing the target in the heartbeat that bumps the epoch"),
    Figure("dataplane", lambda s: [Row("produce_mb_s", "produce 1 KiB records, acks=1", "MB/s", True)] + [
        row for prefix, _bytes, what in dataplane_bench.FETCH_READS
        for row in (Row(f"{prefix}_mb_s", f"fetch, {what}", "MB/s", True),
                    Row(f"{prefix}_consumer_ms_per_mb", "  the consumer's CPU per MB (its one core)", "ms", False),
                    Row(f"{prefix}_broker_ms_per_mb", "  broker CPU per MB fetched", "ms", False))],
           _dataplane, description="confluent-kafka producer then consumer, one partition, groupcoord at "
                                   "fsync=batch (bench.dataplane_bench)"),
    Figure("fetch_wire", lambda s: [
        Row("fetch_wire_mb_s", f"fetch, wire load ({FETCH_CONNECTIONS} connections x 1, answers of 8 MiB)", "MB/s", True),
        Row("fetch_wire_broker_ms_per_mb", "  broker CPU per MB fetched", "ms", False)],
           _fetch_wire, description="bench.loadgen Fetch v12 of partition 0 from offset 0, bodies skipped unread, "
                                    "groupcoord at fsync=batch"),
    Figure("ctp", lambda s: [Row(f"ctp_{n}_s", f"consume-transform-produce {n:,} records "
                                               f"({s.ctp_partitions} partitions, {s.ctp_members} members)", "s", False)
                             for n in s.ctp_records] + [
                            row for n in s.ctp_records for row in (
                                Row(f"ctp_formed_{n}_s", f"  the same from a formed group, {n:,} records", "s", False),
                                Row(f"ctp_formed_{n}_broker_cpu_s", "    broker CPU seconds in it", "s", False),
                                Row(f"ctp_formed_{n}_members_cpu_s", "    the members' CPU seconds in it (their one "
                                                                     "core)", "s", False))],
           _ctp, description="confluent-kafka group, produce on and commit per batch (bench.ctp_bench)"),
    Figure("ctp_delay100", lambda s: [
        Row(f"ctp_delay100_{n}_s", f"consume-transform-produce {n:,} records, initial rebalance delay 100 ms",
            "s", False) for n in s.ctp_records],
           _ctp_delay100, settings=(("group.initial.rebalance.delay.ms", "100"),),
           description="the ctp workload from subscribe, both brokers waiting 100 ms for more members before "
                       "the first generation"),
    Figure("ctp_combinations", lambda s: [
        Row(f"ctp6_{n}_s", f"consume-transform-produce {n:,} records x 6 combinations (range, cooperative-sticky, "
                           "both static, KIP-848, KIP-848 static)", "s", False) for n in s.ctp_records],
           _ctp_combinations, description="bench.ctp_bench.run_combinations: the ctp workload once per "
                                          "assignor/protocol/static combination, summed"),
    Figure("franz_etl", lambda s: [row for i, n in enumerate(s.etl_records) for row in _etl_rows(
        "franz_etl", n, "the broker's first test" if i == 0 else f"after the {s.etl_records[i - 1]:,}-record test")],
           _franz_etl, description="franz-go's own consumer-group ETL test, unmodified (bench.franz_etl), each size "
                                   "in turn on one broker"),
    Figure("franz_etl_fresh", lambda s: _etl_rows("franz_etl_fresh", s.etl_records[-1], "alone on a fresh broker"),
           _franz_etl_fresh, description="the largest TestGroupETL alone, on a broker that has run nothing else"),
    Figure("memory", lambda s: [
        Row("rss_after_commits_mb", f"RSS holding {s.memory_groups:,} groups x {s.memory_partitions} committed offsets",
            "MiB", False, fsync="never"),
        Row("bytes_per_offset", "  RSS growth per committed offset", "B", False, fsync="never")],
           _memory, groupcoord_fsyncs=("never",),
           description="standalone commits pipelined over 8 connections, RSS from /proc (bench.memory_bench)"),
    Figure("transactions", lambda s: [Row(f"txn_{k}p_per_s", f"transactions committed, one record to each of {k} "
                                                              f"partition{'s' if k > 1 else ''}", "txn/s", True)
                                      for k in s.txn_partitions],
           _transactions, description="confluent-kafka transactional producer, begin / produce / commit in a loop "
                                      "(bench.txn_bench)"),
    Figure("startup", lambda s: [Row("startup_ms", "daemon start-up, exec to serving", "ms", False)],
           _startup, description="groupcoord: exec to 'listening on', bytecode compiled as installed; Kafka: exec "
                                 "of kafka.Kafka (storage already formatted) to its first ApiVersions answer, "
                                 "polled every 0.2 s"),
)}
