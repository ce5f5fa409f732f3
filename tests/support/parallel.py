"""The one rule for which tests share a process when ``make test`` runs the suite in two (pytest-xdist).

Why two: CI has two cores and the suite alone kept about one of them busy (its longest tests wait on child
processes: daemons, JVMs, Spark), so one process took ~17 minutes. Why a group: the tests that start a JVM or
resolve Maven, Ivy or Go artefacts share caches a first run fills (~/.cache/groupcoord, ~/.m2, the Java module's
target directory) and session-wide fixtures (the Kafka reference broker, the Spark session); run in one process,
as before, they fill them once and never race. The rest (each on its own ``tmp_path`` and free ports) is
spread over both processes by pytest-xdist's ``loadgroup`` scheduler.

Not in effect with pytest 9.2 and pytest-xdist 3.8 (what ``make test`` installs today): xdist tells its scheduler a
test's group by rewriting ``item._nodeid``, which pytest 9.2's node ids no longer read, so the marks are silently
ignored and these tests spread over both processes like the rest (pytest-dev/pytest-xdist#1386, fix proposed in
#1388). The suite passes that way: a module's tests must not rely on another test of the module having run in the
same process before them (its module fixtures start once per process). The marks stay, for when xdist reads them
again.
"""

from __future__ import annotations

import pytest

from tests.support.full_run import FULL_RUN

SHARED_TOOLS_GROUP = "jvm-and-tool-caches"

_SHARED_TOOL_PATHS = ("tests/reference/", "tests/pipeline/", "tests/docker/", "tests/bench/test_franz_etl.py",
                      "tests/integration/test_acl_clients.py", "tests/integration/test_secured_clients.py",
                      "tests/integration/test_admin_cli.py")
"""Test files that start Java (Kafka, its tools, the Java clients' module, MirrorMaker, Spark), Go or podman."""
_LIVE_KAFKA_PATHS = ("tests/conformance/",)
"""Replayed against live Kafka only in the full run (the default run compares with recorded transcripts)."""


def group_shared_tool_tests(items: list[pytest.Item]) -> None:
    """Marks the tests that use the shared tool caches with one xdist group (inert without ``-n``)."""
    paths = _SHARED_TOOL_PATHS + (_LIVE_KAFKA_PATHS if FULL_RUN else ())
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path.startswith(paths):
            item.add_marker(pytest.mark.xdist_group(SHARED_TOOLS_GROUP))
