"""groupcoord must answer every transaction scenario as Kafka 4.3.1 does (Transactions V1 clients).

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import pytest

from tests.conformance.differential import DifferentialSuite
from tests.conformance.transactions.golden import GOLDEN_DIR
from tests.conformance.transactions.requests import VERSIONS
from tests.conformance.transactions.scenarios import ABORT_CHECK_INTERVAL_MS, SCENARIOS
from tests.conformance.wire import supported_versions

pytestmark = pytest.mark.timeout(120)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {}

SUITE = DifferentialSuite(SCENARIOS, GOLDEN_DIR, KNOWN_DIFFERENCES)
BROKER = pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0,
                                transaction_abort_timed_out_transaction_cleanup_interval_ms=ABORT_CHECK_INTERVAL_MS)


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
    served = await supported_versions(groupcoord_bootstrap)
    for api, version in VERSIONS.items():
        low, high = served[int(api)]
        assert low <= version <= high, f"{api.name} v{version} outside groupcoord's {low}..{high}"


@pytest.mark.reference
async def test_kafka_serves_every_pinned_version(kafka_reference):
    served = await supported_versions(kafka_reference)
    for api, version in VERSIONS.items():
        low, high = served[int(api)]
        assert low <= version <= high, f"{api.name} v{version} outside Kafka's {low}..{high}"


def test_every_known_difference_names_a_scenario_and_a_reason():
    SUITE.assert_known_differences_are_explained()


def test_every_scenario_has_a_recorded_kafka_transcript():
    SUITE.assert_every_scenario_is_recorded()
