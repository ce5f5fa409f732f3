"""groupcoord must answer every share-partition scenario (KIP-932) as Kafka 4.3.1 does.

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import pytest

from tests.support.share_configs import SHORT_SHARE_BOUNDS

from tests.conformance.differential import DifferentialSuite, assert_serves_pinned_versions
from tests.conformance.share_partitions.golden import GOLDEN_DIR
from tests.conformance.share_partitions.requests import VERSIONS
from tests.conformance.share_partitions.scenarios import SCENARIOS

pytestmark = pytest.mark.timeout(180)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {}

SUITE = DifferentialSuite(SCENARIOS, GOLDEN_DIR, KNOWN_DIFFERENCES)
BROKER = pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0, **SHORT_SHARE_BOUNDS)


@pytest.mark.full("Kafka 4.3.1 replaying the recorded scenarios live")
@pytest.mark.reference
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_kafka_still_answers_as_recorded(name, kafka_reference):
    await SUITE.assert_kafka_still_answers_as_recorded(name, kafka_reference)


@BROKER
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_groupcoord_answers_like_kafka(name, groupcoord_bootstrap, kafka_reference_if_available):
    await SUITE.assert_groupcoord_answers_like_kafka(name, groupcoord_bootstrap, kafka_reference_if_available)


@BROKER
async def test_groupcoord_serves_every_pinned_version(groupcoord_bootstrap):
    await assert_serves_pinned_versions(groupcoord_bootstrap, VERSIONS, "groupcoord")


@pytest.mark.reference
async def test_kafka_serves_every_pinned_version(kafka_reference):
    await assert_serves_pinned_versions(kafka_reference, VERSIONS, "Kafka")


def test_every_known_difference_names_a_scenario_and_a_reason():
    SUITE.assert_known_differences_are_explained()


def test_every_scenario_has_a_recorded_kafka_transcript():
    SUITE.assert_every_scenario_is_recorded()
