"""groupcoord must answer every data-plane scenario (Produce, Fetch, ListOffsets, topic admin) as Kafka does.

Kafka's answer comes from the live reference broker where Java and Maven exist, otherwise from the golden
files recorded from it. A deliberate divergence is allowed only through KNOWN_DIFFERENCES, with its reason.
"""

from __future__ import annotations

import pytest

from tests.conformance.dataplane.golden import load_golden
from tests.conformance.dataplane.requests import VERSIONS
from tests.conformance.dataplane.scenarios import SCENARIOS
from tests.conformance.transcript import Observation
from tests.conformance.wire import supported_versions

pytestmark = pytest.mark.timeout(120)

# scenario name -> why groupcoord deliberately answers differently from Kafka.
KNOWN_DIFFERENCES: dict[str, str] = {
    "produce_to_an_unknown_topic": (
        "groupcoord's Produce auto-creates an unknown topic when auto.create.topics.enable is on (NONE at offset 0, "
        "and the topic then exists); Kafka 4.3.1 creates topics only for Metadata, so its Produce answers "
        "UNKNOWN_TOPIC_OR_PARTITION. Kept on purpose: the data-plane issue asks for auto-creation on Metadata and "
        "Produce, and stock clients always send Metadata first, which creates the topic on both brokers."),
}

_LIVE_KAFKA_TRANSCRIPTS: dict[str, list[Observation]] = {}


async def kafka_transcript(name: str, kafka_bootstrap: str | None) -> list[Observation]:
    """Kafka's transcript for a scenario: live (once per session) when the reference runs, else recorded."""
    if kafka_bootstrap is None:
        return load_golden(name)
    if name not in _LIVE_KAFKA_TRANSCRIPTS:
        _LIVE_KAFKA_TRANSCRIPTS[name] = await SCENARIOS[name].run(kafka_bootstrap)
    return _LIVE_KAFKA_TRANSCRIPTS[name]


@pytest.mark.reference
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_kafka_still_answers_as_recorded(name, kafka_reference):
    """Keeps the golden files honest: today's Kafka gives the recorded transcript, run after run."""
    assert await kafka_transcript(name, kafka_reference) == load_golden(name)


@pytest.mark.groupcoord(group_initial_rebalance_delay_ms=0)
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_groupcoord_answers_like_kafka(name, groupcoord_bootstrap, kafka_reference_if_available):
    scenario = SCENARIOS[name]
    expected = await kafka_transcript(name, kafka_reference_if_available)
    actual = await scenario.run(groupcoord_bootstrap)
    if name in KNOWN_DIFFERENCES:
        if actual == expected:
            pytest.fail(f"{name} now matches Kafka: remove it from KNOWN_DIFFERENCES")
        pytest.xfail(reason=KNOWN_DIFFERENCES[name])
    assert actual == expected


async def test_groupcoord_serves_every_pinned_version(groupcoord_bootstrap):
    """The scenarios speak fixed versions; a broker that stopped serving one would fail them all obscurely."""
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
    for name, reason in KNOWN_DIFFERENCES.items():
        assert name in SCENARIOS, f"KNOWN_DIFFERENCES names no scenario {name!r}"
        assert reason.strip(), f"KNOWN_DIFFERENCES[{name!r}] gives no reason"


def test_every_scenario_has_a_recorded_kafka_transcript():
    for name in SCENARIOS:
        assert load_golden(name), f"no golden transcript for {name}; run python -m tests.conformance.dataplane.golden"
