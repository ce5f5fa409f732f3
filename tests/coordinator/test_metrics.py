"""Scenarios an operator sees on /metrics, driven through BrokerMetrics' observer methods with fake sources."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from prometheus_client.parser import text_string_to_metric_families

from groupcoord.coordinator.groups.classic.state import GroupState
from groupcoord.coordinator.metrics import BrokerMetrics


@dataclass
class FakeGroup:
    group_id: str
    state: object
    members: list = field(default_factory=list)


@dataclass
class FakeGroups:
    groups: list
    offsets: dict

    def iter_groups(self):
        return iter(self.groups)

    def committed_offsets(self, group_id):
        return self.offsets.get(group_id, {})


@dataclass
class FakeLog:
    log_end_offset: int


class FakeTopics:
    def __init__(self, ends):
        self.ends = ends

    def log(self, topic, partition):
        end = self.ends.get((topic, partition))
        return None if end is None else FakeLog(end)


def samples(metrics: BrokerMetrics) -> dict[tuple[str, tuple], float]:
    text = metrics.exposition().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_requests_are_counted_by_api_and_kafka_error_name():
    m = BrokerMetrics()
    m.observe_request("JoinGroup", 0, 0.002)
    m.observe_request("JoinGroup", 27, 0.5)
    m.observe_request("Heartbeat", 27, 0.001)
    s = samples(m)
    assert s[("groupcoord_requests_total", (("api", "JoinGroup"), ("error", "NONE")))] == 1
    assert s[("groupcoord_requests_total", (("api", "JoinGroup"), ("error", "REBALANCE_IN_PROGRESS")))] == 1
    assert s[("groupcoord_request_duration_seconds_count", (("api", "JoinGroup"),))] == 2
    assert s[("groupcoord_request_duration_seconds_bucket", (("api", "JoinGroup"), ("le", "0.0025")))] == 1


def test_connections_gauge_follows_open_and_close():
    m = BrokerMetrics()
    for _ in range(3):
        m.connection_opened()
    m.connection_closed()
    assert samples(m)[("groupcoord_connections", ())] == 2


def test_rebalance_and_member_events_move_their_counters():
    m = BrokerMetrics()
    m.on_member_joined("g", "m1", "new member")
    m.on_member_joined("g", "m2", "new member")
    m.on_member_expired("g", "m1", "session timeout")
    m.on_state_change("g", GroupState.STABLE, GroupState.PREPARING_REBALANCE, "member expired")
    m.on_rebalance("g", 2, 1.5, "member expired")
    s = samples(m)
    assert s[("groupcoord_member_events_total", (("event", "joined"),))] == 2
    assert s[("groupcoord_member_events_total", (("event", "expired"),))] == 1
    assert s[("groupcoord_group_state_transitions_total",
              (("from_state", "Stable"), ("to_state", "PreparingRebalance")))] == 1
    assert s[("groupcoord_rebalances_total", (("reason", "member expired"),))] == 1
    assert s[("groupcoord_rebalance_duration_seconds_sum", ())] == 1.5



def test_rebalance_reasons_are_labelled_by_kind_not_by_member():
    # Every group's first rebalance names its own member ids (and what the client wrote): one series per
    # kind of trigger, not one per member ever seen.
    m = BrokerMetrics()
    for i in range(50):
        m.on_rebalance(f"g{i}", 1, 0.0, f"adding new member consumer-{i}-x; client reason: rebalance failed")
        m.on_rebalance(f"g{i}", 2, 0.0, f"member consumer-{i}-x expired: no heartbeat within its session timeout")
    m.on_rebalance("h", 3, 0.0, "removing ['a', 'b'] on pending sync request expiration")
    m.on_rebalance("h", 4, 0.0, "leader a re-joining group during Stable")
    s = {labels: value for (name, labels), value in samples(m).items() if name == "groupcoord_rebalances_total"}
    assert s == {(("reason", "adding new member"),): 50,
                 (("reason", "member expired: no heartbeat within its session timeout"),): 50,
                 (("reason", "removing members on pending sync request expiration"),): 1,
                 (("reason", "leader re-joining group during Stable"),): 1}

def test_offsets_storage_and_traffic_counters():
    m = BrokerMetrics()
    m.on_offsets_committed("g", 3)
    m.on_offsets_expired("g", 2)
    m.on_append(0.0004, 1000)
    m.on_fsync(0.003)
    m.on_shard_loaded(7, 0.2, 150)
    m.on_bytes_in("orders", 500)
    m.on_bytes_out("orders", 1500)
    s = samples(m)
    assert s[("groupcoord_offset_commits_total", ())] == 3
    assert s[("groupcoord_offsets_expired_total", ())] == 2
    assert s[("groupcoord_log_append_seconds_count", ())] == 1
    assert s[("groupcoord_log_appended_bytes_total", ())] == 1000
    assert s[("groupcoord_log_fsync_seconds_count", ())] == 1
    assert s[("groupcoord_shard_load_seconds_count", ())] == 1
    assert s[("groupcoord_shard_loaded_records_total", ())] == 150
    assert s[("groupcoord_bytes_in_total", (("topic", "orders"),))] == 500
    assert s[("groupcoord_bytes_out_total", (("topic", "orders"),))] == 1500


def test_a_cleaner_pass_is_counted_from_its_stats():
    from groupcoord.storage.cleaner import CleanerStats

    m = BrokerMetrics()
    m.on_clean(CleanerStats(partitions_cleaned=2, bytes_read=4096, bytes_written=1024, seconds=0.5))
    s = samples(m)
    assert s[("groupcoord_log_cleaner_partitions_total", ())] == 2
    assert s[("groupcoord_log_cleaner_bytes_total", (("direction", "read"),))] == 4096
    assert s[("groupcoord_log_cleaner_bytes_total", (("direction", "written"),))] == 1024
    assert s[("groupcoord_log_cleaner_seconds_total", ())] == 0.5


def test_group_states_members_and_lag_are_read_at_scrape_time():
    groups = FakeGroups(
        groups=[FakeGroup("a", GroupState.STABLE, ["m1", "m2"]), FakeGroup("b", "Empty")],
        offsets={"a": {("orders", 0): 4, ("orders", 1): 10}, "b": {("gone", 0): 1}},
    )
    m = BrokerMetrics()
    m.attach_state_sources(groups, FakeTopics({("orders", 0): 10, ("orders", 1): 10}))
    s = samples(m)
    assert s[("groupcoord_groups", (("state", "Stable"),))] == 1
    assert s[("groupcoord_groups", (("state", "Empty"),))] == 1
    assert s[("groupcoord_groups", (("state", "PreparingRebalance"),))] == 0
    assert s[("groupcoord_members", ())] == 2
    assert s[("groupcoord_consumer_lag", (("group", "a"), ("partition", "0"), ("topic", "orders")))] == 6
    assert s[("groupcoord_consumer_lag", (("group", "a"), ("partition", "1"), ("topic", "orders")))] == 0
    assert not any(name == "groupcoord_consumer_lag" and ("group", "b") in labels for name, labels in s)

    groups.groups[0].state = GroupState.PREPARING_REBALANCE
    groups.offsets["a"][("orders", 0)] = 9
    s = samples(m)
    assert s[("groupcoord_groups", (("state", "PreparingRebalance"),))] == 1
    assert s[("groupcoord_consumer_lag", (("group", "a"), ("partition", "0"), ("topic", "orders")))] == 1


def test_a_failing_source_does_not_break_the_scrape():
    class Broken:
        def iter_groups(self):
            raise RuntimeError("shard unloading")

    m = BrokerMetrics()
    m.attach_state_sources(Broken(), None)
    m.attach_purgatory("join", lambda: 3)
    m.attach_purgatory("heartbeat", lambda: 1 / 0)
    s = samples(m)
    assert s[("groupcoord_members", ())] == 0
    assert s[("groupcoord_purgatory_size", (("purgatory", "join"),))] == 3
    assert ("groupcoord_purgatory_size", (("purgatory", "heartbeat"),)) not in s


def test_two_brokers_in_one_process_keep_separate_series():
    first, second = BrokerMetrics(), BrokerMetrics()
    first.connection_opened()
    assert samples(first)[("groupcoord_connections", ())] == 1
    assert samples(second)[("groupcoord_connections", ())] == 0


async def _http_get(port: int, path: str, method: str = "GET") -> tuple[str, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0].decode(), body


async def test_metrics_endpoint_serves_the_exposition_on_a_free_port():
    m = BrokerMetrics()
    port = await m.start_http("127.0.0.1", 0)
    try:
        assert port > 0
        m.observe_request("Metadata", 0, 0.001)
        status, body = await _http_get(port, "/metrics")
        assert status == "HTTP/1.1 200 OK"
        assert b'groupcoord_requests_total{api="Metadata",error="NONE"} 1.0' in body
        status, _ = await _http_get(port, "/nope")
        assert status.startswith("HTTP/1.1 404")
        status, _ = await _http_get(port, "/metrics", "POST")
        assert status.startswith("HTTP/1.1 405")
    finally:
        await m.stop_http()
    try:
        await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2)
    except OSError:
        pass
    else:
        raise AssertionError("the endpoint still accepts connections after stop_http")


def test_fetch_sessions_are_counted_from_the_session_cache():
    from groupcoord.coordinator.clock import ManualClock
    from groupcoord.coordinator.dataplane.fetch_sessions import FetchSessionCache

    m, clock = BrokerMetrics(), ManualClock()
    cache = FetchSessionCache(max_entries=1, eviction_ms=100, clock=clock)
    m.attach_fetch_sessions(cache)
    assert samples(m)[("groupcoord_fetch_sessions", ())] == 0
    cache.maybe_create_session(False, False, [])
    clock.advance(200)  # the first session goes stale, so the second may replace it
    cache.maybe_create_session(False, False, [])
    s = samples(m)
    assert s[("groupcoord_fetch_sessions", ())] == 1
    assert s[("groupcoord_fetch_session_partitions", ())] == 0
    assert s[("groupcoord_fetch_sessions_created_total", ())] == 2
    assert s[("groupcoord_fetch_session_evictions_total", ())] == 1


def test_share_groups_are_counted_by_state_with_their_members():
    from groupcoord.coordinator.groups.views import MemberView, share_group_view
    from groupcoord.coordinator.groups.share.group import ShareGroup
    from groupcoord.coordinator.groups.share.member import ShareMember

    busy = ShareGroup("queue")
    busy.members = {"m1": ShareMember("m1"), "m2": ShareMember("m2")}
    groups = FakeGroups(groups=[share_group_view(busy), share_group_view(ShareGroup("idle")),
                                FakeGroup("classic", GroupState.STABLE, ["c1"])], offsets={})
    m = BrokerMetrics()
    m.attach_state_sources(groups, FakeTopics({}))
    s = samples(m)
    assert s[("groupcoord_share_groups", (("state", "Stable"),))] == 1
    assert s[("groupcoord_share_groups", (("state", "Empty"),))] == 1
    assert s[("groupcoord_share_group_members", ())] == 2
    assert s[("groupcoord_members", ())] == 3
    assert isinstance(share_group_view(busy).members[0], MemberView)


def test_plain_histogram_exposes_what_prometheus_clients_histogram_would():
    """The disk histograms are plain integers now (a lock-free observe on every append): their scrape must
    be the bucket, count and sum samples prometheus-client's Histogram gives for the same observations."""
    from prometheus_client import CollectorRegistry, Histogram

    from groupcoord.coordinator.metrics import DISK_BUCKETS, PlainHistogram

    values = [-0.5, 0.0, 0.00005, 0.00007, 0.0001, 0.003, 0.0025, 0.7, 1.0, 3.0, 42.0]
    theirs_registry, mine_registry = CollectorRegistry(), CollectorRegistry()
    theirs = Histogram("disk_seconds", "d", buckets=DISK_BUCKETS, registry=theirs_registry)
    mine = PlainHistogram("disk_seconds", "d", DISK_BUCKETS)
    mine_registry.register(mine)
    for v in values:
        theirs.observe(max(v, 0.0))  # what on_append did before
        mine.observe(v)

    def series(registry):
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for metric in registry.collect() for s in metric.samples if not s.name.endswith("_created")}

    assert series(mine_registry) == pytest.approx(series(theirs_registry))
    assert series(mine_registry)[("disk_seconds_count", ())] == len(values)
