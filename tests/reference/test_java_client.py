"""The stock Java client (kafka-clients) runs a three-member consumer group against a broker.

Against Apache Kafka it proves the Java test itself is right; against groupcoord it proves the broker.
"""

from __future__ import annotations

import pytest

from tests.reference.java_module import JAVA_TEST_TIMEOUT_S, assert_java_test_passes

pytestmark = [pytest.mark.java, pytest.mark.timeout(JAVA_TEST_TIMEOUT_S * 2 + 60)]


@pytest.mark.full("the Java consumer group against live Kafka 4.3.1 (~15 s; the same test against groupcoord runs by default)")
@pytest.mark.reference
def test_java_consumer_group_against_kafka(kafka_reference):
    assert_java_test_passes(kafka_reference)


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
async def test_java_consumer_group_against_groupcoord(groupcoord_bootstrap):
    assert_java_test_passes(groupcoord_bootstrap)
