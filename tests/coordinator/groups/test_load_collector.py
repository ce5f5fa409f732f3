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


def test_what_a_load_built_goes_to_the_oldest_generation_and_nothing_frozen_is_unfrozen():
    gc.collect()
    with CoordinatorRuntime._collector_paused():
        built = [[i] for i in range(5_000)]
    assert gc.get_freeze_count() == 0  # moved to the oldest generation, not left frozen
    assert gc.get_count()[0] < 1_000  # the young generation does not hold the load's objects
    del built
    gc.freeze()  # as the daemon's settle_heap does once it serves
    try:
        frozen = gc.get_freeze_count()
        with CoordinatorRuntime._collector_paused():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
