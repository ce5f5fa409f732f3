"""The stock Java client's exactly-once consume-transform-produce loop (read_committed consumer,
transactional producer, sendOffsetsToTransaction, one deliberate abort) against groupcoord, and against
Apache Kafka 4.3.1 to prove the test itself."""

from __future__ import annotations

import pytest

from tests.reference.java_module import JAVA_TEST_TIMEOUT_S, assert_java_test_passes

pytestmark = [pytest.mark.java, pytest.mark.timeout(JAVA_TEST_TIMEOUT_S * 2 + 60)]


@pytest.mark.full("the Java EOS pipeline against live Kafka 4.3.1 (~15 s; the same test against groupcoord runs by default)")
@pytest.mark.reference
def test_java_eos_pipeline_against_kafka(kafka_reference):
    assert_java_test_passes(kafka_reference, "EosPipelineTest")


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
async def test_java_eos_pipeline_against_groupcoord(groupcoord_bootstrap):
    assert_java_test_passes(groupcoord_bootstrap, "EosPipelineTest")
