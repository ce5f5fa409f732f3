"""Fixtures shared by the whole suite. The embedded broker fixture (`groupcoord_broker`) comes from the
project's own pytest plugin, exactly as users get it."""

from __future__ import annotations

import pytest

from tests.reference.fixtures import groupcoord_bootstrap, kafka_reference, kafka_reference_if_available, kafka_tools
from tests.support.daemon import Daemon
from tests.support.full_run import skip_unless_full_run
from tests.support.parallel import group_shared_tool_tests

__all__ = ["groupcoord_bootstrap", "groupcoord_daemon", "kafka_reference", "kafka_reference_if_available", "kafka_tools"]


@pytest.fixture
def groupcoord_daemon(tmp_path):
    """`groupcoord serve` as a child process on a free port; killed at teardown."""
    daemon = Daemon(tmp_path / "data").start()
    yield daemon
    daemon.kill()


def pytest_collection_modifyitems(config, items):
    skip_unless_full_run(items)
    group_shared_tool_tests(items)
