import pytest

from tests.coordinator.groups.harness import Harness


@pytest.fixture
def h() -> Harness:
    return Harness()
