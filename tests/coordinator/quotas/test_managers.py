"""Kafka's ClientQuotaManager semantics: the sampled rate, the throttle time it earns, and which quota (and
which shared sensor) applies to a user and client-id, by Kafka's precedence."""
from __future__ import annotations

from groupcoord.coordinator.quotas.entities import QuotaEntity
from groupcoord.coordinator.quotas.managers import ClientQuotaManager, ConnectionRateQuotas, QuotaManagers


def entity(**components):
    return QuotaEntity.of((k.replace("_", "-"), v) for k, v in components.items())


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def test_throttle_time_of_a_spike_is_kafkas():
    """ClientQuotaManagerTest.testQuotaViolation: 400 B/s for ten seconds against 500 B/s is free; a 2300-byte
    spike half a window later makes 6300 B over 10.5 s = 600 B/s, (600-500)/500 * 10.5 s = 2100 ms."""
    clock = Clock()
    manager = ClientQuotaManager("Produce", 11, 1, clock_ms=clock)
    manager.update_quota(entity(client_id=None), 500)
    for _ in range(10):
        assert manager.record("ANONYMOUS", "unknown", 400) == 0
        clock.ms += 1000
    clock.ms += 500
    assert manager.record("ANONYMOUS", "unknown", 2300) == 2100
    clock.ms += 2100
    for _ in range(10):
        manager.record("ANONYMOUS", "unknown", 400)
        clock.ms += 1000
    assert manager.record("ANONYMOUS", "unknown", 0) == 0


def test_without_any_quota_nothing_is_charged():
    manager = ClientQuotaManager("Produce", 11, 1)
    assert not manager.enabled
    assert manager.record("ANONYMOUS", "greedy", 10**9) == 0
    assert manager.sensors == {}


def test_request_quota_throttle_is_bounded_by_one_window():
    clock = Clock()
    managers = QuotaManagers(11, 1, clock_ms=clock)
    managers.apply(entity(client_id="busy"), "request_percentage", 1.0)
    assert managers.request.record("ANONYMOUS", "busy", 5000.0) == 1000


def test_precedence_of_user_and_client_id_quotas():
    """The eight levels of ClientQuotaManager's documentation, most specific first."""
    m = ClientQuotaManager("Produce", 11, 1)
    m.update_quota(entity(client_id=None), 8)
    assert (m.metric_tags("alice", "app"), m.quota_limit(m.metric_tags("alice", "app"))) == (("", "app"), 8)
    m.update_quota(entity(client_id="app"), 7)
    assert m.quota_limit(m.metric_tags("alice", "app")) == 7
    m.update_quota(entity(user=None), 6)
    assert m.metric_tags("alice", "app") == ("alice", "")  # every client of the user shares one sensor
    assert m.quota_limit(("alice", "")) == 6
    m.update_quota(entity(user=None, client_id=None), 5)
    assert m.metric_tags("alice", "app") == ("alice", "app") and m.quota_limit(("alice", "app")) == 5
    m.update_quota(entity(user=None, client_id="app"), 4)
    assert m.quota_limit(m.metric_tags("alice", "app")) == 4
    m.update_quota(entity(user="alice"), 3)
    assert m.metric_tags("alice", "app") == ("alice", "") and m.quota_limit(("alice", "")) == 3
    m.update_quota(entity(user="alice", client_id=None), 2)
    assert m.quota_limit(m.metric_tags("alice", "app")) == 2
    m.update_quota(entity(user="alice", client_id="app"), 1)
    assert m.quota_limit(m.metric_tags("alice", "app")) == 1
    # another user falls back to the defaults
    assert m.quota_limit(m.metric_tags("bob", "app")) == 4
    assert m.quota_limit(m.metric_tags("bob", "other")) == 5
    m.update_quota(entity(user="alice", client_id="app"), None)
    assert m.quota_limit(m.metric_tags("alice", "app")) == 2


def test_a_changed_quota_rebinds_live_sensors():
    m = ClientQuotaManager("Fetch", 11, 1)
    m.update_quota(entity(client_id="c"), 100)
    m.record("ANONYMOUS", "c", 1)
    m.update_quota(entity(client_id="c"), 1000)
    assert m.sensors[("", "c")].bound == 1000


def test_connection_creation_rate_per_ip_with_a_default():
    clock = Clock()
    quotas = ConnectionRateQuotas(11, 1, clock_ms=clock)
    quotas.update_quota(entity(ip=None), 2)
    quotas.update_quota(entity(ip="10.0.0.9"), 1000)
    admitted = [quotas.admit("127.0.0.1") for _ in range(25)]
    assert admitted[:20] == [0] * 20 and all(t > 0 for t in admitted[20:])
    assert all(quotas.admit("10.0.0.9") == 0 for _ in range(25))


def test_a_fetch_is_capped_at_one_quota_window():
    """getMaxValueInQuotaWindow: quota × (samples - 1) × window seconds; unbounded without a quota."""
    m = ClientQuotaManager("Fetch", 11, 1)
    assert m.max_value_in_window("ANONYMOUS", "reader") is None
    m.update_quota(entity(client_id="reader"), 1000)
    assert m.max_value_in_window("ANONYMOUS", "reader") == 10_000
    assert m.max_value_in_window("ANONYMOUS", "other") is None
