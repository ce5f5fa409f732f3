"""The stock Java client's exactly-once consume-transform-produce loop (read_committed consumer,
transactional producer, sendOffsetsToTransaction, one deliberate abort) against groupcoord, and against
Apache Kafka 4.3.1 to prove the test itself."""

from __future__ import annotations

import pytest

from tests.reference.java_module import MAVEN_TIMEOUT_S, failure_report, run_java_consumer_group_test
from tests.reference.kafka_distribution import ReferenceUnavailable

pytestmark = [pytest.mark.java, pytest.mark.timeout(MAVEN_TIMEOUT_S * 2 + 60)]


def run_or_skip(bootstrap: str):
    try:
        return run_java_consumer_group_test(bootstrap, "EosPipelineTest")
    except ReferenceUnavailable as exc:
        pytest.skip(reason=str(exc))


@pytest.mark.reference
def test_java_eos_pipeline_against_kafka(kafka_reference):
    done = run_or_skip(kafka_reference)
    assert done.returncode == 0, failure_report(done)


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
async def test_java_eos_pipeline_against_groupcoord(groupcoord_bootstrap):
    done = run_or_skip(groupcoord_bootstrap)
    assert done.returncode == 0, failure_report(done)
