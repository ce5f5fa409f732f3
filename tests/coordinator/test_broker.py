"""The embedded broker wires the broker-wide log.* settings into every log it opens."""

from coordinator.broker import Broker
from storage.config import CleanupPolicy


async def test_consumer_offsets_inherits_the_broker_cleaner_settings_as_in_kafka(tmp_path):
    """__consumer_offsets is compacted with its own segment size; tombstone retention and the compaction
    lags are the broker's log.cleaner.* defaults, as Kafka creates the topic."""
    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1,
                      log_cleaner_delete_retention_ms=1234, log_cleaner_max_compaction_lag_ms=600_000,
                      offsets_topic_segment_bytes=2 * 1024 * 1024) as broker:
        config = broker.groups.log_config
        assert config.cleanup_policy == frozenset({CleanupPolicy.COMPACT})
        assert config.segment_bytes == 2 * 1024 * 1024
        assert config.delete_retention_ms == 1234 and config.max_compaction_lag_ms == 600_000
        assert config.max_segment_ms == 600_000, "rolls within the compaction lag"
