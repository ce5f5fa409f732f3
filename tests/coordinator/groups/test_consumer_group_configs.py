"""Per-group configs used by the group core (Kafka's GroupConfigManager): a group's consumer.session.timeout.ms
and consumer.heartbeat.interval.ms replace the broker's for that group only, clamped into the broker's
current bounds, and a change applies from the member's next heartbeat."""

from groupcoord.coordinator.dataplane.group_configs import GroupConfigSource
from tests.coordinator.groups.harness import FakeTopics, Harness


def harness_with(overrides: dict[str, dict[str, str]], **config) -> Harness:
    h = Harness(FakeTopics(orders=4), **config)
    h.shard.state.group_configs = GroupConfigSource(h.config, lambda group_id: overrides.get(group_id, {}))
    return h


def test_the_group_heartbeat_interval_is_told_to_its_members_only():
    overrides = {"tuned": {"consumer.heartbeat.interval.ms": "7000", "consumer.session.timeout.ms": "50000"}}
    h = harness_with(overrides)
    assert h.cg_join("tuned", "m1")["heartbeat_interval"] == 7000
    assert h.cg_join("plain", "m2")["heartbeat_interval"] == 5000
    overrides["tuned"]["consumer.heartbeat.interval.ms"] = "9000"  # an IncrementalAlterConfigs in between
    assert h.cg("tuned", "m1", 2)["heartbeat_interval"] == 9000


def test_the_group_session_timeout_decides_when_a_silent_member_leaves():
    overrides = {"patient": {"consumer.session.timeout.ms": "60000"}}
    h = harness_with(overrides)
    h.cg_join("patient", "p1")
    h.cg_join("plain", "q1")
    h.advance(45_001)
    assert "q1" not in h.cg_group("plain").members  # the broker's 45 s
    assert "p1" in h.cg_group("patient").members
    h.advance(15_000)
    assert "p1" not in h.cg_group("patient").members  # the group's 60 s


def test_an_override_outside_the_brokers_current_bounds_is_clamped():
    """Set while the bounds allowed it, then the broker's maximum was lowered: GroupConfig.evaluate clamps."""
    overrides = {"g": {"consumer.session.timeout.ms": "60000"}}
    h = harness_with(overrides, group_consumer_max_session_timeout_ms=50000)
    h.cg_join("g", "m1")
    h.advance(50_001)
    assert "m1" not in h.cg_group("g").members
