"""The embedded broker wires the broker-wide log.* settings into every log it opens."""

from groupcoord.coordinator.broker import Broker
from groupcoord.storage.config import CleanupPolicy


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


async def test_a_corrupt_partition_is_offline_and_everything_else_serves(tmp_path):
    """A data partition and an offsets partition corrupt in the middle: the broker starts, the data partition
    answers KAFKA_STORAGE_ERROR (as a Kafka partition on a failed log directory), the offsets partition's groups
    COORDINATOR_NOT_AVAILABLE, and the other partitions and groups work."""
    from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData
    from groupcoord.coordinator.groups.hashing import partition_for
    from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
    from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
    from groupcoord.protocol.errors import ErrorCode
    from groupcoord.protocol.record_batch import encode_batch
    from tests.storage.test_log_manager import corrupt_the_middle

    broken_group = "billing"
    healthy_group = next(g for g in (f"g{i}" for i in range(200)) if partition_for(g, 50) != partition_for("billing", 50))

    def commit(group: str, offset: int) -> OffsetCommit:
        return OffsetCommit(group, (("orders", (CommitPartition(0, offset, -1, ""),)),), -1, "")

    settings = dict(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1)
    async with Broker(**settings) as broker:
        await broker.dataplane.topics.create("orders", 2)
        for partition in (0, 1):
            for _ in range(5):
                await broker.dataplane.topics.log("orders", partition).append(encode_batch([(b"k", b"v" * 100, ())]))
        for offset in range(1, 6):
            await broker.groups.commit_offsets(commit(broken_group, offset))
    corrupt_the_middle(tmp_path / "orders-0")
    corrupt_the_middle(tmp_path / f"__consumer_offsets-{partition_for(broken_group, 50)}", position=100)

    async with Broker(**settings) as broker:
        produced = await broker.dataplane.produce.produce(
            acks=1, api_version=9, transactional_id=None,
            topics=[TopicData("orders", (PartitionData(0, encode_batch([(b"k", b"v", ())])),
                                         PartitionData(1, encode_batch([(b"k", b"v", ())]))))])
        errors = [p["error_code"] for p in produced["responses"][0]["partition_responses"]]
        assert errors == [ErrorCode.kafka_storage_error, ErrorCode.none]
        listed = await broker.dataplane.list_offsets.lookup("orders", 0, -1)
        assert listed["error_code"] == ErrorCode.kafka_storage_error
        refused = await broker.groups.fetch_offsets(OffsetFetch(broken_group, None))
        assert refused["error_code"] == ErrorCode.coordinator_not_available
        accepted = await broker.groups.commit_offsets(commit(healthy_group, 7))
        assert accepted["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none
