"""The stock Java KafkaShareConsumer (kafka-clients 4.3.1, KIP-932): three members share a topic as a queue,
every record acknowledged exactly once; a member killed (its own JVM) while holding records has them delivered
again to the survivors, none lost.

Against Apache Kafka it proves the Java test itself is right; against groupcoord it proves the broker.
"""

from __future__ import annotations

import pytest

from tests.support.share_configs import SHORT_SHARE_BOUNDS

from tests.reference.java_module import JAVA_TEST_TIMEOUT_S, assert_java_test_passes

pytestmark = [pytest.mark.java, pytest.mark.timeout(JAVA_TEST_TIMEOUT_S * 2 + 60)]


@pytest.mark.full("the Java share consumers against live Kafka 4.3.1 (~20 s; the same test against groupcoord runs by default)")
@pytest.mark.reference
def test_java_share_consumers_against_kafka(kafka_reference):
    assert_java_test_passes(kafka_reference, "ShareConsumerTest")


# A killed member is fenced once its share session times out: the test gives its group 4 s sessions and 1 s
# heartbeats (share.session.timeout.ms / share.heartbeat.interval.ms through IncrementalAlterConfigs on GROUP), which
# both brokers allow (SHORT_SHARE_BOUNDS; Kafka's default minimum session is 45 s), so the kill case takes seconds.
@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0, **SHORT_SHARE_BOUNDS)
async def test_java_share_consumers_against_groupcoord(groupcoord_bootstrap):
    assert_java_test_passes(groupcoord_bootstrap, "ShareConsumerTest")
