"""max.broker.partitions: CreateTopics and CreatePartitions past the cap are refused with POLICY_VIOLATION
before anything is created."""

from groupcoord.coordinator.broker import Broker
from groupcoord.protocol.errors import ErrorCode


async def test_creating_past_the_partition_cap_is_a_policy_violation(tmp_path):
    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0", metrics_port=-1, max_broker_partitions=60,
                      offsets_topic_num_partitions=5) as broker:
        topics = broker.dataplane.topics
        assert topics.hosted_partitions() == 5  # __consumer_offsets counts
        assert (await topics.create("fits", 50)).error == ErrorCode.none
        refused = await topics.create("too-many", 6)
        assert refused.error == ErrorCode.policy_violation
        assert "max.broker.partitions=60" in refused.message and "it hosts 55" in refused.message
        assert topics.get("too-many") is None and not (tmp_path / "too-many-0").exists()
        grown = await topics.create_partitions("fits", 56, None)
        assert grown.error == ErrorCode.policy_violation
        assert (await topics.create("exactly", 5)).error == ErrorCode.none
        assert topics.hosted_partitions() == 60
