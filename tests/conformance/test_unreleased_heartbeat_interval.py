"""Where groupcoord does better than Kafka on purpose: a KIP-848 member waiting for partitions another member
has not released yet is told group.consumer.unreleased.heartbeat.interval.ms (default 100 ms) instead of the
group's heartbeat interval, so a Java consumer asks again soon after the release instead of an interval later
(coordinator/groups/consumer/heartbeat.heartbeat_interval_ms says why, from the client's source).

The group-protocol scenarios are run here with it on (the main suite runs them with it off) and compared with
Kafka 4.3.1's answers: everything must be equal except the heartbeat interval of exactly those answers, which
must be the short one. The number of such answers per scenario is pinned, so a change in which members are
told it shows up here."""

from __future__ import annotations

import pytest

from tests.conformance.test_conformance import BROKER_SETTINGS, KNOWN_DIFFERENCES, SUITE

pytestmark = pytest.mark.timeout(120)

SHORT_MS = 100  # the setting's default
ON = {**BROKER_SETTINGS, "group_consumer_unreleased_heartbeat_interval_ms": SHORT_MS}

# scenario -> answers to a member waiting for unreleased partitions (told SHORT_MS here, the group's interval
# by Kafka); every other scenario whose answers carry a heartbeat interval (KIP-848, and the share groups',
# which the setting must not touch) has none and must equal Kafka's transcript exactly.
SHORTENED = {
    "consumer_group_members_share_and_leave": 2,  # "B joins", "B waits for the partitions"
    "consumer_group_range_assignor": 1,  # "B joins"
    "consumer_group_rebalance_timeout_fences_a_member": 1,  # "B joins"
}

WITH_INTERVALS = [name for name in SUITE.scenarios if name not in KNOWN_DIFFERENCES
          and any("heartbeat_interval_ms" in step for step in SUITE.load_golden(name))]


def test_the_pinned_scenarios_are_among_those_compared():
    assert set(SHORTENED) <= set(WITH_INTERVALS) and len(WITH_INTERVALS) > len(SHORTENED)


def differences(ours: list[dict], kafka: list[dict]) -> list[tuple[str, int, int]]:
    """(step, our interval, Kafka's) of each answer that differs only in heartbeat_interval_ms; anything else
    that differs fails here."""
    assert [o["step"] for o in ours] == [k["step"] for k in kafka]
    found = []
    for o, k in zip(ours, kafka):
        if o == k:
            continue
        assert {**o, "heartbeat_interval_ms": None} == {**k, "heartbeat_interval_ms": None}, (o, k)
        found.append((o["step"], o["heartbeat_interval_ms"], k["heartbeat_interval_ms"]))
    return found


def _bounded(names: list[str]) -> list:
    """The KIP-848 scenarios, where the setting acts, in every run; the share groups' (whose answers it must leave
    alone, and which the main suite compares with it off) only in the full run, to keep the default under 15 min."""
    return [name if name.startswith("consumer_group") else
            pytest.param(name, marks=pytest.mark.full("share-group scenarios with the short interval on (~25 s)"))
            for name in names]


@pytest.mark.groupcoord(**ON)
@pytest.mark.parametrize("name", _bounded(WITH_INTERVALS))
async def test_only_the_interval_told_to_a_waiting_member_differs_from_kafka(
        name: str, groupcoord_bootstrap: str, kafka_reference_if_available: str | None) -> None:
    kafka = await SUITE.kafka_transcript(name, kafka_reference_if_available)
    found = differences(await SUITE.scenarios[name].run(groupcoord_bootstrap), kafka)
    assert all(ours == SHORT_MS < theirs for _, ours, theirs in found), found
    assert len(found) == SHORTENED.get(name, 0), found
