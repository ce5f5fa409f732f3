"""The cyclic collector is paused while coordinator partitions load, and restored after (runtime/coordinator_runtime.py)."""

import gc

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.runtime.coordinator_runtime import CoordinatorRuntime


def test_nested_pauses_restore_the_collector_once_and_only_if_it_was_on():
    assert gc.isenabled()
    with CoordinatorRuntime._collector_paused():
        assert not gc.isenabled()
        with CoordinatorRuntime._collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer load is still under way
    assert gc.isenabled()
    gc.disable()
    try:
        with CoordinatorRuntime._collector_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


async def test_a_broker_start_leaves_the_collector_as_it_found_it(tmp_path):
    assert gc.isenabled()
    async with Broker(data_dir=str(tmp_path), listen="127.0.0.1:0", metrics_port=-1):
        assert gc.isenabled()
    assert gc.isenabled()
