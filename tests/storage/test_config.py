"""Topic configs arrive as Kafka-named strings (CreateTopics, the persisted config file)."""

import pytest

from groupcoord.storage.config import CleanupPolicy, InvalidConfigError, LogConfig, TimestampType


def test_kafka_names_override_the_defaults():
    config = LogConfig.from_topic_configs({"cleanup.policy": "compact", "segment.bytes": "104857600",
                                           "message.timestamp.type": "LogAppendTime",
                                           "min.cleanable.dirty.ratio": "0.1"})
    assert config.compact and not config.delete
    assert config.segment_bytes == 104857600
    assert config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    assert config.min_cleanable_dirty_ratio == 0.1
    assert config.retention_ms == LogConfig().retention_ms


def test_compact_and_delete_together():
    config = LogConfig.from_topic_configs({"cleanup.policy": "compact,delete"})
    assert config.cleanup_policy == frozenset({CleanupPolicy.COMPACT, CleanupPolicy.DELETE})


def test_configs_survive_a_round_trip_through_their_kafka_names():
    config = LogConfig.from_topic_configs({"cleanup.policy": "compact", "retention.bytes": "1000"})
    rendered = config.to_topic_configs()
    assert rendered["cleanup.policy"] == "compact" and rendered["retention.bytes"] == "1000"
    assert LogConfig.from_topic_configs(rendered) == config


@pytest.mark.parametrize("configs", [{"no.such.config": "1"}, {"segment.bytes": "lots"},
                                     {"cleanup.policy": "shred"}, {"min.cleanable.dirty.ratio": "2"},
                                     {"segment.bytes": "5"}])
def test_bad_topic_configs_are_refused(configs):
    with pytest.raises(InvalidConfigError):
        LogConfig.from_topic_configs(configs)


def test_min_compaction_lag_above_max_is_a_conflict_as_in_kafka():
    with pytest.raises(InvalidConfigError, match=r"min.compaction.lag.ms \(5000\) > max.compaction.lag.ms \(1000\)"):
        LogConfig.from_topic_configs({"min.compaction.lag.ms": "5000", "max.compaction.lag.ms": "1000"})
    with pytest.raises(InvalidConfigError, match="max.compaction.lag.ms must be at least 1"):
        LogConfig.from_topic_configs({"max.compaction.lag.ms": "0"})


def test_a_compacted_log_rolls_by_the_smaller_of_segment_ms_and_max_compaction_lag():
    compacted = LogConfig.from_topic_configs({"cleanup.policy": "compact", "max.compaction.lag.ms": "60000"})
    assert compacted.max_segment_ms == 60_000
    assert LogConfig.from_topic_configs({"max.compaction.lag.ms": "60000"}).max_segment_ms == compacted.segment_ms
