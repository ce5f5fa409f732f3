"""Prometheus metrics of one broker.

Each `BrokerMetrics` owns its own `CollectorRegistry`, so several embedded brokers in one process (tests,
notebooks) never share or clash on series. Event-driven metrics (requests, rebalances, appends) are updated by
observer calls from the server, the group coordinator and storage; state-shaped metrics (groups per state,
members, consumer lag, purgatory sizes) are read at scrape time from the attached sources, so they can never
drift from the truth. Scrapes are served on the broker's event loop (see metrics_http.py), so the collectors
read coordinator state without locks.

prometheus-client is imported by the first scrape, not by the broker's start (metric_families.py: its import
is ~7 % of the daemon's start-up). Until then the metrics are plain numbers (``PlainCounter``,
``PlainLabelledCounter``, ``PlainGauge``, ``PlainHistogram``...) that expose, series for series, what
prometheus-client's Counter, Gauge and Histogram of the same name did (``_created`` included), and the
registry is made from them by the first ``registry`` or ``exposition()``.
"""

from __future__ import annotations

import bisect
import enum
import re
import time
from collections import Counter as _Tally
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from groupcoord.protocol.errors import ErrorCode

from . import metric_families as families

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

PREFIX = "groupcoord"

# Kafka request latencies span sub-millisecond metadata calls to multi-second long polls and JoinGroups.
REQUEST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# A rebalance lasts at least one heartbeat round and at most the rebalance timeout (default 5 min).
REBALANCE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
# Appends and fsyncs are disk operations: tens of microseconds to a slow disk's hundreds of milliseconds.
DISK_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
LOAD_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0)
# prometheus-client's Histogram.DEFAULT_BUCKETS (+Inf is added by the histogram): the transaction shards' load.
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
KNOWN_GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",
                      "Assigning", "Reconciling")  # the last two: KIP-848 consumer groups


# Patterns compiled by their first use (re's cache), not at start-up: the first rebalance.
_MEMBER_ID = r"\b(member|leader) (?!joining\b|during\b|expired\b|rejoined\b)\S+"
_MEMBER_LIST = r"\[[^\]]*\]"


def rebalance_reason_label(reason: str) -> str:
    """The `reason` label of the rebalance counter: what kind of event triggered it, never which member or
    what the client wrote (``adding new member <id>; client reason: ...`` -> ``adding new member``), so the
    series stay few however many groups and members come and go (one series per member id would grow the
    registry, and the cost of each rebalance, with every group ever formed)."""
    text = reason.split("; client reason:", 1)[0].strip()
    text = re.sub(_MEMBER_LIST, "members", re.sub(_MEMBER_ID, r"\1", text))
    return text or "unknown"


class MemberEvent(enum.Enum):
    JOINED = "joined"
    LEFT = "left"
    EXPIRED = "expired"


def error_label(error_code: int) -> str:
    """Kafka's spelling of the error (NONE, REBALANCE_IN_PROGRESS, ...); the number for codes kio does not know."""
    try:
        return ErrorCode(int(error_code)).name.upper()
    except ValueError:
        return str(int(error_code))


def state_label(state: Any) -> str:
    """Group states arrive as the coordinator's enum (value = Kafka's name) or as plain strings."""
    if isinstance(state, enum.Enum):
        return state.value if isinstance(state.value, str) else state.name
    return str(state)


class RequestStats:
    """Request counts and latency buckets kept as plain integers.

    Every request passes here, so this is the metrics hot path: prometheus-client's labelled children take
    a lock and walk their buckets on each observation (~10 us a request, a sixth of a heartbeat's cost).
    Plain dict and list updates on the event loop need no lock; the collector turns them into Prometheus
    series at scrape time, which runs on the same loop."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], int] = {}
        self.buckets: dict[str, list[int]] = {}  # per api: one count per bucket (non-cumulative), then +Inf
        self.sums: dict[str, float] = {}

    def observe(self, api: str, error_code: int, seconds: float) -> None:
        key = (api, error_code)
        self.counts[key] = self.counts.get(key, 0) + 1
        buckets = self.buckets.get(api)
        if buckets is None:
            buckets = self.buckets[api] = [0] * (len(REQUEST_BUCKETS) + 1)
            self.sums[api] = 0.0
        buckets[bisect.bisect_left(REQUEST_BUCKETS, seconds)] += 1
        if seconds > 0.0:  # as max(seconds, 0.0), without the call: every request not laned comes here
            self.sums[api] += seconds

    def observe_many(self, api: str, error_code: int, seconds_each: float, count: int) -> None:
        """``count`` requests that took ``seconds_each`` (a batch answered together by the frame loop)."""
        key = (api, error_code)
        self.counts[key] = self.counts.get(key, 0) + count
        buckets = self.buckets.get(api)
        if buckets is None:
            buckets = self.buckets[api] = [0] * (len(REQUEST_BUCKETS) + 1)
            self.sums[api] = 0.0
        buckets[bisect.bisect_left(REQUEST_BUCKETS, seconds_each)] += count
        if seconds_each > 0.0:  # as max(seconds_each, 0.0) * count, without the call (once per read of lanes)
            self.sums[api] += seconds_each * count


class PlainHistogram:
    """An unlabelled histogram kept as plain integers until it is scraped: for disk events on the request path
    (one per log append and per fsync: a commit's, a produce's), where prometheus-client's Histogram takes a
    lock and walks its buckets on every observation (~0.7 µs, and its Counter ~0.3 µs more per append).
    Exposed under the same names (``<name>_bucket``, ``_count``, ``_sum``)."""

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = buckets
        self.counts = [0] * (len(buckets) + 1)  # one per bucket (non-cumulative), then +Inf
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.sum += max(seconds, 0.0)

    def collect(self) -> Iterator[Any]:
        cumulative, running = [], 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts):
            running += n
            cumulative.append((_bucket_label(bound), running))
        yield families.HistogramMetricFamily(self.name, self.documentation, buckets=cumulative, sum_value=self.sum)


def _describe(collector: Any) -> list[Any]:
    """What prometheus-client's own metric answers ``describe()`` with, for a registry to learn its names (and refuse
    a duplicate) when it is registered: its families (their samples are not read)."""
    return list(collector.collect())


class CreatedHistogram(PlainHistogram):
    """A histogram that was prometheus-client's Histogram (observed off the request path: a shard's load), kept as
    plain numbers until the first scrape so that prometheus-client is not imported at start. Exposed as that
    Histogram: ``_created`` (when it was made) after the sum, and the sum takes what it is given."""

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        super().__init__(name, documentation, buckets)
        self.created = time.time()

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    describe = _describe

    def collect(self) -> Iterator[Any]:
        for family in super().collect():
            if families.created_series():
                family.add_sample(self.name + "_created", {}, self.created)
            yield family


class PlainCounter:
    """An unlabelled counter that was prometheus-client's Counter, kept as a plain float until the first scrape so
    that prometheus-client is not imported at start. Exposed as that Counter (``<name>_total``, ``<name>_created``:
    when it was made); like it, refuses a negative increment."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self.value += amount

    describe = _describe

    def collect(self) -> Iterator[Any]:
        family = families.CounterMetricFamily(self.name, self.documentation)
        family.add_metric([], self.value, created=self.created if families.created_series() else None)
        yield family


class PlainLabelledCounter:
    """A labelled counter that was prometheus-client's Counter, kept as plain floats until the first scrape (see
    PlainCounter). ``children`` maps label values (strings, in ``labels`` order) to ``[value, created]``, created
    when those values were first counted, as the Counter's child was by its first ``labels()``; exposed in that
    order, as the Counter's children are."""

    def __init__(self, name: str, documentation: str, labels: tuple[str, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.labels = labels
        self.children: dict[tuple[str, ...], list[float]] = {}

    def inc(self, values: tuple[str, ...], amount: float = 1) -> None:
        child = self.children.get(values)
        if child is None:
            child = self.children[values] = [0.0, time.time()]
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        child[0] += amount

    def value(self, *values: str) -> float:
        """The count of those label values (0 if never counted)."""
        child = self.children.get(values)
        return 0.0 if child is None else child[0]

    describe = _describe

    def collect(self) -> Iterator[Any]:
        family = families.CounterMetricFamily(self.name, self.documentation, labels=list(self.labels))
        created = families.created_series()
        for values, (value, made) in list(self.children.items()):
            family.add_metric(list(values), value, created=made if created else None)
        yield family


class PlainGauge:
    """An unlabelled gauge that was prometheus-client's Gauge (open connections), a plain float until the first
    scrape; exposed as that Gauge."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self.value = 0.0

    def inc(self, amount: float = 1) -> None:
        self.value += amount

    def dec(self, amount: float = 1) -> None:
        self.value -= amount

    describe = _describe

    def collect(self) -> Iterator[Any]:
        yield families.GaugeMetricFamily(self.name, self.documentation, value=self.value)


class Tally:
    """A counter that is a plain integer until it is scraped: for events on the request path (one per
    committed offset), where prometheus-client's Counter takes a lock on every increment."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self.value = 0

    def collect(self) -> Iterator[Any]:
        yield families.CounterMetricFamily(self.name, self.documentation, value=self.value)


class LabelledTally:
    """A labelled counter kept as plain integers until it is scraped, for events every group goes through a
    few times in each rebalance (state transitions, members joining, rebalances): prometheus-client's
    labelled child takes a lock on every increment, eight of them for each group of three that forms.
    ``counts`` maps a tuple of label values, in ``labels`` order, to its count; exposed as the Counter of
    the same name would be (``<name>_total``), one series per label values seen."""

    def __init__(self, name: str, documentation: str, labels: tuple[str, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.labels = labels
        self.counts: dict[tuple[str, ...], int] = {}

    def inc(self, values: tuple[str, ...]) -> None:
        self.counts[values] = self.counts.get(values, 0) + 1

    def collect(self) -> Iterator[Any]:
        family = families.CounterMetricFamily(self.name, self.documentation, labels=list(self.labels))
        for values, n in sorted(self.counts.items()):
            family.add_metric(list(values), n)
        yield family


class RequestCollector:
    def __init__(self, stats: RequestStats) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Any]:
        requests = families.CounterMetricFamily(f"{PREFIX}_requests", "Requests answered, by API and error", labels=["api", "error"])
        for (api, code), n in sorted(self.stats.counts.items()):
            requests.add_metric([api, error_label(code)], n)
        yield requests
        duration = families.HistogramMetricFamily(
            f"{PREFIX}_request_duration_seconds", "Time from request decoded to response encoded", labels=["api"]
        )
        for api, counts in sorted(self.stats.buckets.items()):
            cumulative, running = [], 0
            for bound, n in zip((*REQUEST_BUCKETS, float("inf")), counts):
                running += n
                cumulative.append((_bucket_label(bound), running))
            duration.add_metric([api], cumulative, sum_value=self.stats.sums[api])
        yield duration


def _bucket_label(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


class BrokerMetrics:
    """Every metric of one broker, and the observer methods the other packages call to move them."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        """``registry``: one of the caller's to register the broker's metrics in now; without one, the broker's
        own is made by the first ``registry`` or scrape (prometheus-client is imported then, not here)."""
        self._collectors: list[Any] = []  # in the order they are exposed (registered)
        r = self._collectors.append
        self.request_stats = RequestStats()
        self.observe_request = self.request_stats.observe  # (see the method of the same name)
        r(RequestCollector(self.request_stats))
        self.connections = PlainGauge(f"{PREFIX}_connections", "Open client connections")
        r(self.connections)
        self.connections_refused = PlainLabelledCounter(
            f"{PREFIX}_connections_refused", "Connections closed at accept because a limit was reached "
            "(max.connections, max.connections.per.ip)", ("limit",))
        r(self.connections_refused)
        self.connections_expired = PlainLabelledCounter(
            f"{PREFIX}_connections_expired", "Connections closed by a deadline (connections.max.idle.ms, "
            "socket.request.read.timeout.ms)", ("deadline",))
        r(self.connections_expired)
        self.accept_errors = PlainLabelledCounter(
            f"{PREFIX}_accept_errors", "accept() calls that failed for want of descriptors or memory (EMFILE, "
            "ENFILE, ENOBUFS, ENOMEM); the connection waits in the backlog", ("error",))
        r(self.accept_errors)
        self.rebalances = LabelledTally(f"{PREFIX}_rebalances", "Completed rebalances, by what triggered them",
                                        ("reason",))
        r(self.rebalances)
        self.rebalance_duration = PlainHistogram(
            f"{PREFIX}_rebalance_duration_seconds", "Time from PreparingRebalance to the new generation",
            REBALANCE_BUCKETS)
        r(self.rebalance_duration)
        self.group_transitions = LabelledTally(
            f"{PREFIX}_group_state_transitions", "Group state machine transitions", ("from_state", "to_state"))
        r(self.group_transitions)
        self.member_events = LabelledTally(
            f"{PREFIX}_member_events", "Members joining, leaving and expiring (session timeout)", ("event",))
        r(self.member_events)
        self.offset_commits = Tally(f"{PREFIX}_offset_commits", "Partition offsets committed")
        r(self.offset_commits)
        self.offsets_expired = PlainCounter(f"{PREFIX}_offsets_expired", "Committed offsets removed by retention")
        r(self.offsets_expired)
        self.log_append = PlainHistogram(f"{PREFIX}_log_append_seconds", "Time to append a batch to a partition log",
                                         DISK_BUCKETS)
        r(self.log_append)
        self.log_appended_bytes = Tally(f"{PREFIX}_log_appended_bytes", "Bytes appended to partition logs")
        r(self.log_appended_bytes)
        self.log_fsync = PlainHistogram(f"{PREFIX}_log_fsync_seconds", "Time of one fsync of a log segment",
                                        DISK_BUCKETS)
        r(self.log_fsync)
        self.cleaner_partitions = PlainCounter(f"{PREFIX}_log_cleaner_partitions",
                                               "Partitions compacted by the cleaner")
        r(self.cleaner_partitions)
        self.cleaner_bytes = PlainLabelledCounter(f"{PREFIX}_log_cleaner_bytes", "Bytes the cleaner read and wrote",
                                                  ("direction",))
        r(self.cleaner_bytes)
        self.cleaner_seconds = PlainCounter(f"{PREFIX}_log_cleaner_seconds", "Time spent compacting")
        r(self.cleaner_seconds)
        self.shard_load = CreatedHistogram(
            f"{PREFIX}_shard_load_seconds", "Time to replay one __consumer_offsets partition when it is loaded",
            LOAD_BUCKETS)
        r(self.shard_load)
        self.shard_records = PlainCounter(f"{PREFIX}_shard_loaded_records", "Records replayed while loading shards")
        r(self.shard_records)
        self.transactions_ended = PlainLabelledCounter(
            f"{PREFIX}_transactions_ended", "Transactions completed (markers written), by result", ("result",))
        r(self.transactions_ended)
        self.transactions_timed_out = PlainCounter(f"{PREFIX}_transactions_timed_out",
                                                   "Transactions aborted by the coordinator past their timeout")
        r(self.transactions_timed_out)
        self.producers_fenced = PlainCounter(f"{PREFIX}_transactional_producers_fenced",
                                             "Transactional producer incarnations fenced by a newer epoch")
        r(self.producers_fenced)
        self.txn_shard_load = CreatedHistogram(f"{PREFIX}_transaction_shard_load_seconds",
                                               "Time to replay one __transaction_state partition", DEFAULT_BUCKETS)
        r(self.txn_shard_load)
        self.bytes_in = PlainLabelledCounter(f"{PREFIX}_bytes_in", "Record bytes produced, by topic", ("topic",))
        r(self.bytes_in)
        self.bytes_out = PlainLabelledCounter(f"{PREFIX}_bytes_out", "Record bytes fetched, by topic", ("topic",))
        r(self.bytes_out)
        self.log_write_failures = PlainCounter(
            f"{PREFIX}_log_write_failures", "Partition logs whose write or fsync failed (ENOSPC, EIO): appends "
            "refused until a retry finds the disk writable")
        r(self.log_write_failures)
        self.log_write_recoveries = PlainCounter(
            f"{PREFIX}_log_write_recoveries", "Partition logs taking appends again after a failed write")
        r(self.log_write_recoveries)
        self.authorization_denials = PlainLabelledCounter(
            f"{PREFIX}_authorization_denials", "Operations the authorizer refused (ACLs), by API", ("api",))
        r(self.authorization_denials)
        self.authentications = PlainLabelledCounter(
            f"{PREFIX}_authentications", "Authentications on TLS and SASL listeners, by listener, mechanism "
            "(SSL for a TLS handshake and certificate) and result (success, failure)",
            ("listener", "mechanism", "result"))
        r(self.authentications)
        self.reauthentications = PlainLabelledCounter(
            f"{PREFIX}_reauthentications", "SASL re-authentications (KIP-368) of live connections, by listener, "
            "mechanism and result", ("listener", "mechanism", "result"))
        r(self.reauthentications)
        self.state_collector = StateCollector()
        r(self.state_collector)
        self._registry: CollectorRegistry | None = None
        if registry is not None:
            self._register_in(registry)
        self._http: Any = None
        self.health: Callable[[], dict] = lambda: {"healthy": True, "problems": []}

    @property
    def registry(self) -> CollectorRegistry:
        """The prometheus-client registry of this broker's metrics: the caller's, or this broker's own, made (and
        prometheus-client imported) by the first use."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            self._register_in(CollectorRegistry(auto_describe=True))
        assert self._registry is not None
        return self._registry

    def _register_in(self, registry: CollectorRegistry) -> None:
        for collector in self._collectors:
            registry.register(collector)
        self._registry = registry

    # --- server ---

    def observe_request(self, api_name: str, error_code: int, seconds: float) -> None:
        """One answer (the dispatcher calls it per request not laned): ``__init__`` binds the instance's own
        to ``request_stats.observe``, so that no frame of this method comes between; this is the same."""
        self.request_stats.observe(api_name, error_code, seconds)

    def observe_requests(self, api_name: str, error_code: int, seconds_each: float, count: int) -> None:
        self.request_stats.observe_many(api_name, error_code, seconds_each, count)

    def on_authorization_denied(self, api: str) -> None:
        self.authorization_denials.inc((api,))

    def connection_opened(self) -> None:
        self.connections.inc()

    def connection_closed(self) -> None:
        self.connections.dec()

    def connection_refused(self, reason: str) -> None:
        self.connections_refused.inc((reason,))

    def connection_expired(self, reason: str) -> None:
        self.connections_expired.inc((reason,))

    def accept_failed(self, error: str) -> None:
        self.accept_errors.inc((error,))

    def authentication(self, listener: str, mechanism: str, succeeded: bool, reauthentication: bool = False) -> None:
        counter = self.reauthentications if reauthentication else self.authentications
        counter.inc((listener, mechanism, "success" if succeeded else "failure"))

    # --- group coordinator observer ---

    # Each group forms through a handful of these (a transition per state, a join per member): plain
    # counts (LabelledTally, PlainHistogram), turned into series at scrape time. The label values are few
    # (states, events, reasons with member ids stripped).

    def on_state_change(self, group_id: str, old: Any, new: Any, reason: str = "") -> None:
        self.group_transitions.inc((state_label(old), state_label(new)))

    def on_rebalance(self, group_id: str, generation: int, duration_s: float, reason: str = "") -> None:
        self.rebalances.inc((rebalance_reason_label(reason),))
        self.rebalance_duration.observe(max(duration_s, 0.0))

    def _member_event(self, event: MemberEvent) -> None:
        self.member_events.inc((event._value_,))  # (Enum.value is a Python-level descriptor: two calls)

    def on_member_joined(self, group_id: str, member_id: str, reason: str = "") -> None:
        self._member_event(MemberEvent.JOINED)

    def on_member_left(self, group_id: str, member_id: str, reason: str = "") -> None:
        self._member_event(MemberEvent.LEFT)

    def on_member_expired(self, group_id: str, member_id: str, reason: str = "") -> None:
        self._member_event(MemberEvent.EXPIRED)

    def on_offsets_committed(self, group_id: str, n: int) -> None:
        self.offset_commits.value += n

    def on_offsets_expired(self, group_id: str, n: int) -> None:
        self.offsets_expired.inc(n)

    def on_shard_loaded(self, partition: int, seconds: float, records: int) -> None:
        self.shard_load.observe(max(seconds, 0.0))
        self.shard_records.inc(records)

    # --- storage and data plane ---

    def on_append(self, seconds: float, nbytes: int) -> None:
        self.log_append.observe(seconds)
        self.log_appended_bytes.value += nbytes

    def on_fsync(self, seconds: float) -> None:
        self.log_fsync.observe(seconds)

    def on_clean(self, stats: Any) -> None:
        """One cleaner pass (storage.cleaner.CleanerStats); read defensively so a new stats field never breaks it."""
        self.cleaner_partitions.inc(getattr(stats, "partitions_cleaned", 0))
        self.cleaner_bytes.inc(("read",), getattr(stats, "bytes_read", 0))
        self.cleaner_bytes.inc(("written",), getattr(stats, "bytes_written", 0))
        self.cleaner_seconds.inc(max(getattr(stats, "seconds", 0.0), 0.0))

    def on_bytes_in(self, topic: str, n: int) -> None:
        self.bytes_in.inc((topic,), n)

    def on_bytes_out(self, topic: str, n: int) -> None:
        self.bytes_out.inc((topic,), n)

    # --- the transaction coordinator (TransactionObserver) ---

    def on_transaction_ended(self, transactional_id: str, committed: bool) -> None:
        self.transactions_ended.inc(("commit" if committed else "abort",))

    def on_transaction_timed_out(self, transactional_id: str) -> None:
        self.transactions_timed_out.inc()

    def on_producer_fenced(self, transactional_id: str) -> None:
        self.producers_fenced.inc()

    def on_txn_shard_loaded(self, partition: int, seconds: float, records: int) -> None:
        self.txn_shard_load.observe(seconds)

    # --- scrape-time sources ---

    def attach_transactions(self, coordinator: Any) -> None:
        """The transaction coordinator (``iter_transactions()``): transactions by state at each scrape."""
        self.state_collector.transactions = coordinator

    def attach_state_sources(self, groups_service: Any, topics: Any) -> None:
        self.state_collector.groups_service = groups_service
        self.state_collector.topics = topics

    def attach_health(self, health: Callable[[], dict]) -> None:
        """The broker's health (``{"healthy": bool, "problems": [...]}``): /health and the healthy gauge."""
        self.health = health
        self.state_collector.health = health

    def on_write_failed(self, partition: str, error: BaseException) -> None:
        self.log_write_failures.inc()

    def on_write_recovered(self, partition: str) -> None:
        self.log_write_recoveries.inc()

    def attach_purgatory(self, name: str, size: Callable[[], int]) -> None:
        self.state_collector.purgatories[name] = size

    def attach_share_partitions(self, manager: Any) -> None:
        """The share partitions and sessions (KIP-932; ``stats()``), read at each scrape."""
        self.state_collector.share_partitions = manager

    def attach_quotas(self, managers: Any) -> None:
        """The client quota managers (coordinator/quotas/managers.py), read at scrape time."""
        collector = _QuotaCollector(managers)
        self._collectors.append(collector)
        if self._registry is not None:
            self._registry.register(collector)

    def attach_fetch_sessions(self, cache: Any) -> None:
        """The KIP-227 session cache (`len()`, `total_partitions`, `created`, `evictions`), or a function returning
        it, or None while there is none (the data plane makes it with the first Fetch: nothing to report till then)."""
        self.state_collector.fetch_sessions = cache

    def exposition(self) -> bytes:
        """The text a scrape returns: prometheus-client's text format of the registry."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    # --- HTTP endpoint ---

    async def start_http(self, host: str, port: int) -> int:
        """Serve /metrics on host:port (0 or -1: any free port); returns the bound port."""
        from .ops.metrics_http import MetricsHttpServer

        if self._http is None:
            self._http = MetricsHttpServer(self.exposition, lambda: self.health())
            await self._http.start(host, port)
        return self._http.port

    async def stop_http(self) -> None:
        if self._http is not None:
            http, self._http = self._http, None
            await http.stop()


class StateCollector:
    """Groups per state, members, consumer lag and purgatory sizes, read from live state at each scrape.

    Sources are duck-typed (`iter_groups()`, `committed_offsets(group_id)`, `log(topic, partition)`), and a
    source that is missing or fails yields no series rather than failing the whole scrape.
    """

    def __init__(self) -> None:
        self.groups_service: Any = None
        self.topics: Any = None
        self.purgatories: dict[str, Callable[[], int]] = {}
        self.fetch_sessions: Any = None
        self.health: Callable[[], dict] | None = None
        self.transactions: Any = None
        self.share_partitions: Any = None

    def describe(self) -> Iterable[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        groups = self._groups()
        by_state = _Tally(state_label(getattr(g, "state", "Unknown")) for g in groups)
        states = families.GaugeMetricFamily(f"{PREFIX}_groups", "Consumer groups by state", labels=["state"])
        for state in sorted(set(KNOWN_GROUP_STATES) | set(by_state)):
            states.add_metric([state], by_state.get(state, 0))
        yield states
        members = families.GaugeMetricFamily(f"{PREFIX}_members", "Members of all groups (classic, consumer and share)")
        members.add_metric([], sum(_count(getattr(g, "members", ())) for g in groups))
        yield members
        yield from self._share_groups(groups)
        yield self._lag(groups)
        purgatory = families.GaugeMetricFamily(f"{PREFIX}_purgatory_size", "Operations parked in a purgatory",
                                      labels=["purgatory"])
        for name, size in sorted(self._purgatory_sizes().items()):
            purgatory.add_metric([name], size)
        yield purgatory
        yield from self._fetch_sessions()
        yield from self._transactions()
        yield from self._share_partitions()
        yield from self._health()

    @staticmethod
    def _share_groups(groups: list[Any]) -> Iterator[Any]:
        """KIP-932 share groups by state (Empty, Stable) and their members (also counted in the totals above)."""
        share = [g for g in groups if getattr(g, "protocol_type", None) == "share"]
        by_state = _Tally(getattr(g, "state", "Unknown") for g in share)
        gauge = families.GaugeMetricFamily(f"{PREFIX}_share_groups", "Share groups by state", labels=["state"])
        for state in sorted({"Empty", "Stable"} | set(by_state)):
            gauge.add_metric([state], by_state.get(state, 0))
        yield gauge
        members = families.GaugeMetricFamily(f"{PREFIX}_share_group_members", "Members of all share groups")
        members.add_metric([], sum(_count(getattr(g, "members", ())) for g in share))
        yield members

    def _health(self) -> Iterator[Any]:
        if self.health is None:
            return
        try:
            health = self.health()
        except Exception:
            return
        healthy = families.GaugeMetricFamily(f"{PREFIX}_healthy", "1 while every partition takes writes and every group "
                                    "shard is loaded; 0 while any write fails or anything is offline (see /health)")
        healthy.add_metric([], 1 if health["healthy"] else 0)
        yield healthy
        by_problem = families.GaugeMetricFamily(f"{PREFIX}_partitions_unhealthy", "Partitions with a problem, by problem",
                                       labels=["problem"])
        tally = _Tally(problem["problem"] for problem in health["problems"])
        for problem in ("writes failing", "offline: corrupt", "group shard unavailable"):
            by_problem.add_metric([problem], tally.get(problem, 0))
        yield by_problem

    def _transactions(self) -> Iterator[Any]:
        """Transactional ids by the state of their transaction; Ongoing + Prepare* are the open ones."""
        iter_transactions = getattr(self.transactions, "iter_transactions", None)
        if iter_transactions is None:
            return
        try:
            by_state = _Tally(m.state.display for m in iter_transactions())
        except Exception:
            return
        gauge = families.GaugeMetricFamily(f"{PREFIX}_transactions", "Transactional ids by transaction state", labels=["state"])
        for state in ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort"):
            gauge.add_metric([state], by_state.get(state, 0))
        yield gauge
        ongoing = families.GaugeMetricFamily(f"{PREFIX}_transactions_ongoing", "Transactions open (Ongoing or being ended)")
        ongoing.add_metric([], sum(by_state.get(s, 0) for s in ("Ongoing", "PrepareCommit", "PrepareAbort")))
        yield ongoing

    def _share_partitions(self) -> Iterator[Any]:
        manager = self.share_partitions
        if manager is None:
            return
        try:
            stats = manager.stats()
        except Exception:
            return
        for name, key, help_text in (("share_sessions", "sessions", "Share sessions (KIP-932) cached"),
                                     ("share_partitions", "share_partitions",
                                      "Share partitions loaded (group, topic, partition)")):
            gauge = families.GaugeMetricFamily(f"{PREFIX}_{name}", help_text)
            gauge.add_metric([], stats[key])
            yield gauge
        records = families.GaugeMetricFamily(f"{PREFIX}_share_records_in_flight", "Records of share partitions acquired by a "
                                    "member or available to be delivered again", labels=["state"])
        records.add_metric(["acquired"], stats["acquired"])
        records.add_metric(["available"], stats["available"])
        yield records
        for name, key, help_text in (
                ("share_lock_expiries", "lock_expiries", "Acquisition locks that expired (records delivered again)"),
                ("share_redeliveries", "redeliveries", "Records delivered more than once"),
                ("share_archived_at_delivery_limit", "archived_by_limit",
                 "Records archived after group.share.delivery.count.limit deliveries")):
            counter = families.CounterMetricFamily(f"{PREFIX}_{name}", help_text)
            counter.add_metric([], stats[key])
            yield counter

    def _fetch_sessions(self) -> Iterator[Any]:
        cache = self.fetch_sessions
        if callable(cache):
            cache = cache()
        if cache is None:
            return
        try:
            sessions, partitions = len(cache), int(cache.total_partitions)
            created, evicted = int(cache.created), int(cache.evictions)
        except Exception:
            return
        gauge = families.GaugeMetricFamily(f"{PREFIX}_fetch_sessions", "Incremental fetch sessions (KIP-227) cached")
        gauge.add_metric([], sessions)
        yield gauge
        gauge = families.GaugeMetricFamily(f"{PREFIX}_fetch_session_partitions", "Partitions held by cached fetch sessions")
        gauge.add_metric([], partitions)
        yield gauge
        counter = families.CounterMetricFamily(f"{PREFIX}_fetch_sessions_created", "Fetch sessions created")
        counter.add_metric([], created)
        yield counter
        counter = families.CounterMetricFamily(f"{PREFIX}_fetch_session_evictions", "Fetch sessions evicted to make room")
        counter.add_metric([], evicted)
        yield counter

    def _groups(self) -> list[Any]:
        iter_groups = getattr(self.groups_service, "iter_groups", None)
        if iter_groups is None:
            return []
        try:
            return list(iter_groups())
        except Exception:  # a scrape must not take the endpoint down with it
            return []

    def _lag(self, groups: list[Any]) -> Any:
        lag = families.GaugeMetricFamily(
            f"{PREFIX}_consumer_lag", "Log end offset minus committed offset", labels=["group", "topic", "partition"]
        )
        committed_offsets = getattr(self.groups_service, "committed_offsets", None)
        log_of = getattr(self.topics, "log", None)
        if committed_offsets is None or log_of is None:
            return lag
        for group in groups:
            group_id = getattr(group, "group_id", None)
            try:
                offsets: Mapping[tuple[str, int], Any] = committed_offsets(group_id) or {}
            except Exception:
                continue
            for (topic, partition), committed in sorted(offsets.items()):
                end = _log_end(log_of, topic, partition)
                offset = getattr(committed, "offset", committed)
                if end is None or offset is None:
                    continue
                lag.add_metric([str(group_id), topic, str(partition)], max(end - int(offset), 0))
        return lag

    def _purgatory_sizes(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        from_service = getattr(self.groups_service, "purgatory_sizes", None)
        if from_service is not None:
            try:
                sizes.update(from_service())
            except Exception:
                pass
        for name, size in self.purgatories.items():
            try:
                sizes[name] = int(size())
            except Exception:
                continue
        return sizes


def _count(members: Any) -> int:
    try:
        return len(members)
    except TypeError:
        return 0


def _log_end(log_of: Callable[[str, int], Any], topic: str, partition: int) -> int | None:
    try:
        log = log_of(topic, partition)
    except Exception:
        return None
    end = getattr(log, "log_end_offset", None)
    return None if end is None else int(end)


class _QuotaCollector:
    """Kafka's per-client quota metrics (``byte-rate``/``request-time`` and ``throttle-time`` tagged by user and
    client-id, the connection-rate throttles) from the quota managers, at scrape time."""

    def __init__(self, managers: Any) -> None:
        self._managers = managers

    def collect(self) -> Iterator[Any]:
        labels = ["quota_type", "user", "client_id"]
        rate = families.GaugeMetricFamily(f"{PREFIX}_client_quota_rate",
                                 "Measured rate of a client quota sensor: bytes/s (Produce, Fetch), percent of a "
                                 "second of request time (Request)", labels=labels)
        bound = families.GaugeMetricFamily(f"{PREFIX}_client_quota_bound", "The quota that sensor is held to", labels=labels)
        throttle = families.CounterMetricFamily(f"{PREFIX}_client_quota_throttle_time_ms",
                                       "Throttle time given to clients over their quota", labels=labels)
        throttled = families.CounterMetricFamily(f"{PREFIX}_client_quota_throttled_requests",
                                        "Requests answered with a throttle time", labels=labels)
        for manager in self._managers.client_managers():
            for (user, client_id), measured, limit in manager.rates():
                rate.add_metric([manager.quota_type, user, client_id], measured)
                if limit is not None:
                    bound.add_metric([manager.quota_type, user, client_id], limit)
            for (user, client_id), stats in manager.throttles.items():
                throttle.add_metric([manager.quota_type, user, client_id], stats.throttle_ms)
                throttled.add_metric([manager.quota_type, user, client_id], stats.throttled)
        connections = families.CounterMetricFamily(f"{PREFIX}_client_quota_connections_throttled",
                                          "Connections closed for exceeding an ip's connection_creation_rate")
        connections.add_metric([], self._managers.connections.throttled)
        yield from (rate, bound, throttle, throttled, connections)
