"""What share-group tests set on both brokers under test."""

from __future__ import annotations

# The lower bounds both brokers under test run with (the Kafka reference sets the same three in
# tests/reference/kafka_broker.py), so that a test may give a share group short sessions, heartbeats and
# acquisition locks through its share.* group configs; every default is Kafka's.
SHORT_SHARE_BOUNDS = {
    "group_share_min_session_timeout_ms": 2000,
    "group_share_min_heartbeat_interval_ms": 500,
    "group_share_min_record_lock_duration_ms": 1000,
}
