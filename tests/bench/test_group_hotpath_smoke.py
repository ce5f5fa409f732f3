"""bench.group_hotpath forms its groups (a few, quickly) and reports CPU per group."""

from __future__ import annotations

import asyncio
import gc

from bench import group_hotpath
from groupcoord.coordinator.broker import new_event_loop


def test_group_hotpath_forms_groups_and_reports(capsys):
    threshold = gc.get_threshold()
    loop = new_event_loop()
    try:
        loop.run_until_complete(group_hotpath.run(groups=5, trials=2, warm=3))
    finally:
        loop.close()
        asyncio.set_event_loop(None)
        # The bench settles the heap as the daemon does (gc.freeze, a larger young generation): this pytest
        # process's later tests must find the collector as it was.
        gc.unfreeze()
        gc.set_threshold(*threshold)
    out = capsys.readouterr().out
    assert "5 groups of 3 per trial" in out and "ms CPU per group" in out
