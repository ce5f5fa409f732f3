"""Whether this build accepts the share-group configs a share-group client test sets through
IncrementalAlterConfigs (``share.auto.offset.reset`` above all: without it a test's records may be produced
before the share partition starts, at the latest offset). The per-group config table lives in
``coordinator/dataplane/group_configs.py``; until it lists the share configs those tests skip, saying why."""

from __future__ import annotations

import pytest

from groupcoord.coordinator.dataplane import group_configs

SHARE_GROUP_CONFIGS = ("share.auto.offset.reset", "share.record.lock.duration.ms")


def share_group_configs_served() -> bool:
    return all(name in group_configs.GROUP_CONFIGS for name in SHARE_GROUP_CONFIGS)


requires_share_group_configs = pytest.mark.skipif(
    not share_group_configs_served(),
    reason="group configs share.auto.offset.reset/share.record.lock.duration.ms are not served by this build "
           "(coordinator/dataplane/group_configs.py)")

# The lower bounds both brokers under test run with (the Kafka reference sets the same three in
# tests/reference/kafka_broker.py), so that a test may give a share group short sessions, heartbeats and
# acquisition locks through its share.* group configs; every default is Kafka's.
SHORT_SHARE_BOUNDS = {
    "group_share_min_session_timeout_ms": 2000,
    "group_share_min_heartbeat_interval_ms": 500,
    "group_share_min_record_lock_duration_ms": 1000,
}
