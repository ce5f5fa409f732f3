"""What the differential suites (group protocol, data plane, transactions) share: golden files recorded from
Kafka, Kafka's transcript of a scenario (live once per test session, else recorded), the comparison with its
list of deliberate differences, and the check that a broker serves the versions the scenarios pin."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.transcript import Observation
from tests.conformance.wire import supported_versions
from tests.support.full_run import FULL_RUN


@dataclass
class DifferentialSuite:
    """``scenarios`` maps a name to an object with ``run(bootstrap) -> transcript``; ``known_differences`` maps a
    scenario name to why groupcoord deliberately answers differently from Kafka."""

    scenarios: Mapping[str, Any]
    golden_dir: Path
    known_differences: Mapping[str, str]
    _live: dict[str, list[Observation]] = field(default_factory=dict)

    # -- golden files ---------------------------------------------------------------------------------

    def golden_path(self, name: str) -> Path:
        return self.golden_dir / f"{name}.json"

    def load_golden(self, name: str) -> list[Observation]:
        return json.loads(self.golden_path(name).read_text())["transcript"]

    def save_golden(self, name: str, transcript: list[Observation], kafka_version: str) -> None:
        document = {"scenario": name, "recorded_from": f"Apache Kafka {kafka_version}", "transcript": transcript}
        self.golden_path(name).write_text(json.dumps(document, indent=1) + "\n")

    async def record(self, bootstrap: str, kafka_version: str, names: list[str] | None = None) -> None:
        """Runs each scenario twice and keeps it only if both runs agree: a golden file must be reproducible."""
        for name in names or list(self.scenarios):
            run: Callable[[str], Awaitable[list[Observation]]] = self.scenarios[name].run
            first, second = await run(bootstrap), await run(bootstrap)
            if first != second:
                raise AssertionError(f"scenario {name} is not deterministic against Kafka")
            self.save_golden(name, first, kafka_version)
            print(f"recorded {name}: {len(first)} observations")

    def record_from_reference(self) -> None:
        """The golden modules' entry point: start the Kafka reference and record the scenarios named on the
        command line (all of them by default)."""
        from tests.reference.kafka_broker import SHARED_BROKER

        broker = SHARED_BROKER.acquire()
        try:
            asyncio.run(self.record(broker.bootstrap_servers, broker.distribution.version, sys.argv[1:] or None))
        finally:
            SHARED_BROKER.release()

    # -- comparison -----------------------------------------------------------------------------------

    async def kafka_transcript(self, name: str, kafka_bootstrap: str | None) -> list[Observation]:
        """Kafka's transcript for a scenario. In the full run, live (once per session) when the reference runs;
        otherwise the one recorded from Kafka 4.3.1 — the pinned reference answers the same every time (the full
        run's ``test_kafka_still_answers_as_recorded`` checks exactly that), and replaying every scenario against
        a JVM broker would cost the default run minutes of its 15."""
        if kafka_bootstrap is None or not FULL_RUN:
            return self.load_golden(name)
        return await self.live_transcript(name, kafka_bootstrap)

    async def live_transcript(self, name: str, kafka_bootstrap: str) -> list[Observation]:
        if name not in self._live:
            self._live[name] = await self.scenarios[name].run(kafka_bootstrap)
        return self._live[name]

    async def assert_kafka_still_answers_as_recorded(self, name: str, kafka_bootstrap: str) -> None:
        assert await self.live_transcript(name, kafka_bootstrap) == self.load_golden(name)

    async def assert_groupcoord_answers_like_kafka(self, name: str, groupcoord_bootstrap: str,
                                                   kafka_bootstrap: str | None) -> None:
        """Equal transcripts, or an xfail naming the deliberate difference (which fails once it is gone)."""
        expected = await self.kafka_transcript(name, kafka_bootstrap)
        actual = await self.scenarios[name].run(groupcoord_bootstrap)
        if name in self.known_differences:
            if actual == expected:
                pytest.fail(f"{name} now matches Kafka: remove it from KNOWN_DIFFERENCES")
            pytest.xfail(reason=self.known_differences[name])
        assert actual == expected

    def assert_known_differences_are_explained(self) -> None:
        for name, reason in self.known_differences.items():
            assert name in self.scenarios, f"KNOWN_DIFFERENCES names no scenario {name!r}"
            assert reason.strip(), f"KNOWN_DIFFERENCES[{name!r}] gives no reason"

    def assert_every_scenario_is_recorded(self) -> None:
        for name in self.scenarios:
            assert self.golden_path(name).exists() and self.load_golden(name), f"no golden transcript for {name}"


async def assert_serves_pinned_versions(bootstrap: str, versions: Mapping[Any, int], broker: str) -> None:
    """The scenarios speak fixed versions (``versions``: an ApiKey-like enum → version); a broker that stopped
    serving one would fail them all obscurely, so this names the one it does not serve."""
    served = await supported_versions(bootstrap)
    for api, version in versions.items():
        low, high = served[int(api)]
        assert low <= version <= high, f"{api.name} v{version} outside {broker}'s {low}..{high}"


def differential_tests(suite: DifferentialSuite, broker: pytest.MarkDecorator,
                       versions: Mapping[Any, int] | None = None) -> dict[str, Callable[..., Any]]:
    """The tests every differential suite runs, for its test module to take as its own with
    ``globals().update(differential_tests(SUITE, BROKER, VERSIONS))`` (pytest collects them there).

    One definition, so that a rule about them — the live re-check of Kafka only in the full run, the golden file
    for every scenario, the pinned versions served by both brokers — holds in every suite at once. ``broker`` is
    the ``groupcoord`` marker with the broker settings the suite's scenarios need; ``versions`` (an ApiKey-like
    enum → version) adds the check that both brokers serve the versions the scenarios pin."""
    names = list(suite.scenarios)

    @pytest.mark.full("Kafka 4.3.1 replaying the recorded scenarios live")
    @pytest.mark.reference
    @pytest.mark.parametrize("name", names)
    async def test_kafka_still_answers_as_recorded(name: str, kafka_reference: str) -> None:
        """Keeps the golden files honest: today's Kafka gives the recorded transcript, run after run."""
        await suite.assert_kafka_still_answers_as_recorded(name, kafka_reference)

    @broker
    @pytest.mark.parametrize("name", names)
    async def test_groupcoord_answers_like_kafka(name: str, groupcoord_bootstrap: str,
                                                 kafka_reference_if_available: str | None) -> None:
        await suite.assert_groupcoord_answers_like_kafka(name, groupcoord_bootstrap, kafka_reference_if_available)

    def test_every_known_difference_names_a_scenario_and_a_reason() -> None:
        suite.assert_known_differences_are_explained()

    def test_every_scenario_has_a_recorded_kafka_transcript() -> None:
        suite.assert_every_scenario_is_recorded()

    tests: list[Callable[..., Any]] = [test_kafka_still_answers_as_recorded, test_groupcoord_answers_like_kafka,
                                       test_every_known_difference_names_a_scenario_and_a_reason,
                                       test_every_scenario_has_a_recorded_kafka_transcript]
    if versions is not None:
        pinned = versions

        async def test_groupcoord_serves_every_pinned_version(groupcoord_bootstrap: str) -> None:
            await assert_serves_pinned_versions(groupcoord_bootstrap, pinned, "groupcoord")

        @pytest.mark.reference
        async def test_kafka_serves_every_pinned_version(kafka_reference: str) -> None:
            await assert_serves_pinned_versions(kafka_reference, pinned, "Kafka")

        tests += [test_groupcoord_serves_every_pinned_version, test_kafka_serves_every_pinned_version]
    return {test.__name__: test for test in tests}
