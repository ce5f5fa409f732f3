"""The one rule for what only the full run (`make test-full`, GROUPCOORD_FULL_TESTS=1) does.

The default run must stay under 15 minutes on CI's two cores, so the longest scenarios are marked
``@pytest.mark.full("what it is (~time)")`` and skipped there with that reason printed; the full run is one flag
away. Tests that can either run against live Kafka or against Kafka's recorded answers ask ``FULL_RUN``."""

from __future__ import annotations

import os

import pytest

FULL_RUN = bool(os.environ.get("GROUPCOORD_FULL_TESTS"))


def skip_unless_full_run(items: list[pytest.Item]) -> None:
    """Turns each ``full``-marked item into a skip that says why and how to run it."""
    if FULL_RUN:
        return
    for item in items:
        marker = item.get_closest_marker("full")
        if marker is not None:
            what = marker.args[0] if marker.args else "long scenario"
            item.add_marker(pytest.mark.skip(reason=f"{what}: in the full run, make test-full (GROUPCOORD_FULL_TESTS=1)"))


DEFAULT_RUN_SHARE = 3
"""The default run draws a third of a long property test's examples (the full run all of them)."""


def examples(full: int) -> int:
    """How many examples a hypothesis property draws: ``full`` in the full run, a third of it (never fewer than
    20) in the default run. Only for the properties that cost the default run tens of seconds (the hand-written
    codecs checked against kio draw ~150 frames for each of dozens of versions): each run draws new examples,
    so the default runs still explore, and the full run keeps each property's whole budget."""
    return full if FULL_RUN else max(20, full // DEFAULT_RUN_SHARE)
